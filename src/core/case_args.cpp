#include "core/case_args.hpp"

#include <cstdlib>

#include <algorithm>
#include <stdexcept>

namespace kbench {

const FlagSpec* CaseArgs::find_flag(std::string_view name) const {
  const auto it = std::find_if(flags_.begin(), flags_.end(), [&](const FlagSpec& f) { return f.name == name; });
  return it == flags_.end() ? nullptr : &*it;
}

const std::vector<std::string>& CaseArgs::values_of(std::string_view name, FlagKind kind) const {
  const FlagSpec* spec = find_flag(name);
  if (spec == nullptr) throw std::logic_error("routine " + routine_ + " has no flag --" + std::string(name));
  if (spec->kind != kind) throw std::logic_error("flag --" + std::string(name) + " read as the wrong kind");
  const auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) {
    static const std::vector<std::string> none;
    return none;
  }
  return it->second;
}

bool CaseArgs::has(std::string_view name) const {
  const auto it = values_.find(name);
  return it != values_.end() && !it->second.empty();
}

std::vector<std::string> CaseArgs::values(std::string_view name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t CaseArgs::integer(std::string_view name) const {
  const auto value = optional_integer(name);
  if (!value) throw std::logic_error("flag --" + std::string(name) + " has no value");
  return *value;
}

std::optional<int64_t> CaseArgs::optional_integer(std::string_view name) const {
  const auto& v = values_of(name, FlagKind::integer);
  if (v.empty()) return std::nullopt;
  if (v.size() > 1) throw std::logic_error("flag --" + std::string(name) + " still holds a sweep: expand_sweep first");
  return std::stoll(v.front());
}

double CaseArgs::real(std::string_view name) const {
  const auto& v = values_of(name, FlagKind::real);
  if (v.empty()) throw std::logic_error("flag --" + std::string(name) + " has no value");
  if (v.size() > 1) throw std::logic_error("flag --" + std::string(name) + " still holds a sweep: expand_sweep first");
  // strtod, as the CLI's validation: std::stod throws on subnormal values such as 1e-310.
  return std::strtod(v.front().c_str(), nullptr);
}

const std::string& CaseArgs::text(std::string_view name) const {
  const auto& v = values_of(name, FlagKind::text);
  if (v.empty()) throw std::logic_error("flag --" + std::string(name) + " has no value");
  return v.front();
}

std::optional<std::string> CaseArgs::optional_text(std::string_view name) const {
  const auto& v = values_of(name, FlagKind::text);
  if (v.empty()) return std::nullopt;
  return v.front();
}

const std::vector<std::string>& CaseArgs::list(std::string_view name) const {
  return values_of(name, FlagKind::text_list);
}

bool CaseArgs::flag(std::string_view name) const {
  const auto& v = values_of(name, FlagKind::boolean);
  return !v.empty() && v.front() == "true";
}

int CaseArgs::count(std::string_view name) const {
  const auto& v = values_of(name, FlagKind::count);
  return v.empty() ? 0 : std::stoi(v.front());
}

std::string CaseArgs::display(std::string_view name) const {
  const FlagSpec* spec = find_flag(name);
  if (spec == nullptr || !has(name)) return {};
  const auto& v = values_.find(name)->second;
  if (spec->kind == FlagKind::boolean) return v.front() == "true" ? "True" : "False";
  std::string joined;
  for (const auto& item : v) {
    if (!joined.empty()) joined.push_back(' ');
    joined += item;
  }
  return joined;
}

void CaseArgs::set(const std::string& name, std::vector<std::string> values, bool given) {
  if (find_flag(name) == nullptr) throw std::logic_error("routine " + routine_ + " has no flag --" + name);
  values_[name] = std::move(values);
  if (given && std::find(given_order_.begin(), given_order_.end(), name) == given_order_.end()) {
    given_order_.push_back(name);
  }
}

void CaseArgs::unset(std::string_view name) {
  if (const auto it = values_.find(name); it != values_.end()) values_.erase(it);
  std::erase(given_order_, name);
}

bool CaseArgs::given(std::string_view name) const {
  return std::find(given_order_.begin(), given_order_.end(), name) != given_order_.end();
}

bool CaseArgs::operator==(const CaseArgs& other) const {
  if (routine_ != other.routine_ || values_ != other.values_) return false;
  // The same flags were given, whatever their order.
  auto a = given_order_;
  auto b = other.given_order_;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace kbench
