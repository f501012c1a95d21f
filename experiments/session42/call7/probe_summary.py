import lzma,sys,statistics as st
lines=lzma.open(sys.argv[1],'rt').read().split('\n')
P=[];C=[]
for l in lines:
    f=l.split()
    if not f: continue
    if f[0]=='P': P.append(tuple(int(x) for x in f[1:]))
    elif f[0]=='C': C.append(tuple(int(x) for x in f[1:]))
# split launches by time gaps: use the P lines' p0 sorted; take the last launch = top 1/N by time
allt=sorted(p[2] for p in P)
# find largest gaps
gaps=sorted(((allt[i+1]-allt[i],i) for i in range(len(allt)-1)),reverse=True)[:10]
cut=max(i for g,i in gaps if g>1e6) if any(g>1e6 for g,i in gaps) else -1
t0=allt[cut+1]
P=[p for p in P if p[2]>=t0]; 
Cl=[c for c in C if c[4]>=t0-1e5]
print('launch P',len(P),'C',len(Cl))
# per segment round r of CTA b
prod={(p[0],p[1]):p for p in P}
cons={}
for c in Cl: cons.setdefault((c[0],c[2]),{})[c[1]]=c
def s(x): return '%6.0f'%x
rows=[]
for (b,r),d in cons.items():
    if 0 not in d or 1 not in d: continue
    c0,c1=d[0],d[1]
    p=prod.get((b,r))
    if not p: continue
    qwait=max(c0[5]-c0[4],c1[5]-c1[4])
    stage=p[5]-p[4]; rowswait=p[4]-p[3]; qempty_wait=p[3]-p[2]
    # previous segment end
    prev=cons.get((b,r-1))
    if prev and 0 in prev and 1 in prev:
        loop_end_early=min(prev[0][6],prev[1][6]); loop_end_late=max(prev[0][6],prev[1][6])
        odd=loop_end_late-loop_end_early
        merge=max(prev[0][8],prev[1][8])-loop_end_late
        stage_vs_end=p[5]-loop_end_late   # staging done relative to last consumer loop end
        rows.append((r,c0[3],qwait,stage,rowswait,qempty_wait,odd,merge,stage_vs_end,p[3]-loop_end_late))
    else:
        rows.append((r,c0[3],qwait,stage,rowswait,qempty_wait,None,None,None,None))
first=[x for x in rows if x[0]==0]; later=[x for x in rows if x[0]>0]
print('first segments',len(first),'median q_full wait',st.median(x[2] for x in first),'stage',st.median(x[3] for x in first),'rows wait',st.median(x[4] for x in first))
if later:
  for i,name in [(2,'q_full wait'),(3,'staging (p3-p2)'),(4,'q_rows wait'),(5,'q_empty wait (p1-p0)'),(6,'odd wait (late-early loop end)'),(7,'merge (late loop end -> merge end)'),(8,'staged - late loop end'),(9,'producer at stage_q - late loop end')]:
    v=[x[i] for x in later]
    print('later %-38s median %7.0f mean %7.0f min %7.0f max %7.0f'%(name,st.median(v),st.mean(v),min(v),max(v)))
