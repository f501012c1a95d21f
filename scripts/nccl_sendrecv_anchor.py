#!/usr/bin/env python3
"""NCCL's own send/receive bandwidth between the GPUs of this host: the physical anchor of the MoE
all-to-all (issue 22). Every pair of ranks exchanges a message both ways at once (what dispatch and
combine do); the aggregate counts the bytes every rank sends, as kbench's moe_a2a_dispatch_combine
counts its traffic. PyTorch's NCCL, one process per GPU, CUDA events over 20 iterations after 5
warm-ups, median.

    python3 scripts/nccl_sendrecv_anchor.py [--gpus 2] [--sizes-mib 1 8 64 256 1024] [--csv out.csv]
"""
import argparse
import os
import statistics

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, args, results):
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off on shared hosts
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(args.port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=args.gpus, device_id=torch.device("cuda", rank))
    for mib in args.sizes_mib:
        count = mib * (1 << 20)
        send = torch.randint(0, 255, (count,), dtype=torch.uint8, device="cuda")
        recv = [torch.empty(count, dtype=torch.uint8, device="cuda") for _ in range(args.gpus)]
        def exchange():
            ops = []
            for peer in range(args.gpus):
                if peer == rank:
                    continue
                ops.append(dist.P2POp(dist.isend, send, peer))
                ops.append(dist.P2POp(dist.irecv, recv[peer], peer))
            for req in dist.batch_isend_irecv(ops):
                req.wait()
        for _ in range(5):
            exchange()
        times = []
        for _ in range(20):
            dist.barrier()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            exchange()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
        worst = torch.tensor(times, device="cuda")
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)  # per iteration, the slowest rank (kbench's rule)
        if rank == 0:
            ms = statistics.median(worst.tolist())
            sent = count * (args.gpus - 1) * args.gpus  # bytes, all ranks
            results.append((mib, ms, sent / (ms * 1e-3) / 1e9, count * (args.gpus - 1) / (ms * 1e-3) / 1e9))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 8, 64, 256, 1024])
    parser.add_argument("--port", type=int, default=29531)
    parser.add_argument("--csv")
    args = parser.parse_args()
    with mp.Manager() as manager:
        results = manager.list()
        mp.spawn(worker, args=(args, results), nprocs=args.gpus)
        rows = sorted(results)
    lines = ["gpus,message_mib,median_ms,aggregate_gb_per_s,per_rank_send_gb_per_s"]
    lines += [f"{args.gpus},{mib},{ms:.4f},{agg:.1f},{per:.1f}" for mib, ms, agg, per in rows]
    print("\n".join(lines))
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
