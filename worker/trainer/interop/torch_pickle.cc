#include "worker/trainer/interop/torch_pickle.h"

#include <cstring>
#include <limits>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nmsparse {
namespace {

using Kind = PickleValue::Kind;

// One pass over the opcodes with the pickle machine's stack, marks and memo; values by index.
class Parser {
 public:
  Parser(std::string_view bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  absl::StatusOr<TorchPickle> Run() {
    while (true) {
      if (pos_ >= bytes_.size()) return Error("ends before its STOP opcode (truncated?)");
      const size_t at = pos_;
      const uint8_t op = static_cast<uint8_t>(bytes_[pos_++]);
      if (op == '.') break;
      if (absl::Status s = Step(op); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "torch.save file %s: data.pkl at byte %d (opcode 0x%02x): %s", file_, at, op, s.message()));
      }
    }
    if (stack_.size() != 1)
      return Error(absl::StrCat("ends with ", stack_.size(), " values on the stack, not 1"));
    pickle_.root = stack_.back();
    return std::move(pickle_);
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("torch.save file ", file_, ": data.pkl ", what));
  }

  // Reads n little-endian bytes as an unsigned number.
  bool Read(size_t n, uint64_t* out) {
    if (bytes_.size() - pos_ < n) return false;
    *out = 0;
    for (size_t i = 0; i < n; ++i)
      *out |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    pos_ += n;
    return true;
  }

  size_t Add(PickleValue v) {
    pickle_.values.push_back(std::move(v));
    return pickle_.values.size() - 1;
  }
  size_t AddKind(Kind kind) {
    PickleValue v;
    v.kind = kind;
    return Add(std::move(v));
  }
  PickleValue& At(size_t i) { return pickle_.values[i]; }

  absl::Status Push(size_t i) {
    stack_.push_back(i);
    return absl::OkStatus();
  }
  absl::Status Pop(size_t* out) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      return absl::InvalidArgumentError("stack underflow");
    *out = stack_.back();
    stack_.pop_back();
    return absl::OkStatus();
  }
  // The values above the last mark, which is removed.
  absl::Status PopMark(std::vector<size_t>* out) {
    if (marks_.empty()) return absl::InvalidArgumentError("no mark");
    out->assign(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return absl::OkStatus();
  }

  absl::Status PushString(size_t length_bytes) {
    uint64_t n = 0;
    if (!Read(length_bytes, &n) || bytes_.size() - pos_ < n)
      return absl::InvalidArgumentError("truncated string");
    PickleValue v;
    v.kind = Kind::kString;
    v.text.assign(bytes_.substr(pos_, n));
    pos_ += n;
    return Push(Add(std::move(v)));
  }

  absl::Status PushInt(size_t n, bool is_signed) {
    uint64_t u = 0;
    if (!Read(n, &u)) return absl::InvalidArgumentError("truncated integer");
    PickleValue v;
    v.kind = Kind::kInt;
    if (is_signed && n < 8 && n > 0 && (u >> (8 * n - 1)) & 1) u |= ~uint64_t{0} << (8 * n);  // Sign-extend.
    std::memcpy(&v.number, &u, sizeof(u));
    return Push(Add(std::move(v)));
  }

  absl::Status Memo(uint64_t key) {
    if (stack_.empty()) return absl::InvalidArgumentError("memoize of an empty stack");
    memo_[key] = stack_.back();
    return absl::OkStatus();
  }
  absl::Status Get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return absl::InvalidArgumentError(absl::StrCat("memo ", key, " was never stored"));
    return Push(it->second);
  }

  absl::Status Container(Kind kind, std::vector<size_t> items) {
    const size_t i = AddKind(kind);
    At(i).items = std::move(items);
    return Push(i);
  }

  // Appends `items` to the list (or set) below them; an opaque object takes and drops them.
  absl::Status Append(std::vector<size_t> items) {
    if (stack_.empty()) return absl::InvalidArgumentError("append to nothing");
    PickleValue& target = At(stack_.back());
    if (target.kind == Kind::kObject) return absl::OkStatus();
    if (target.kind != Kind::kList) return absl::InvalidArgumentError("append to " + Describe(stack_.back()));
    target.items.insert(target.items.end(), items.begin(), items.end());
    return absl::OkStatus();
  }
  absl::Status SetItems(std::vector<size_t> items) {
    if (items.size() % 2 != 0) return absl::InvalidArgumentError("a key without a value");
    if (stack_.empty()) return absl::InvalidArgumentError("setitem on nothing");
    PickleValue& target = At(stack_.back());
    if (target.kind == Kind::kObject) return absl::OkStatus();
    if (target.kind != Kind::kDict)
      return absl::InvalidArgumentError("setitem on " + Describe(stack_.back()));
    target.items.insert(target.items.end(), items.begin(), items.end());
    return absl::OkStatus();
  }

  std::string Describe(size_t i) const { return PickleValueDescription(pickle_, i); }

  absl::Status PushObject(const std::string& class_name) {
    PickleValue v;
    v.kind = Kind::kObject;
    v.text = class_name;
    return Push(Add(std::move(v)));
  }

  // callable(*args) for the globals a state dict uses; any other makes an opaque object.
  absl::Status Reduce() {
    size_t args = 0, callable = 0;
    if (absl::Status s = Pop(&args); !s.ok()) return s;
    if (absl::Status s = Pop(&callable); !s.ok()) return s;
    if (At(callable).kind != Kind::kGlobal)
      return absl::InvalidArgumentError("call of " + Describe(callable));
    if (At(args).kind != Kind::kTuple) return absl::InvalidArgumentError("call with " + Describe(args));
    const std::string name = At(callable).text;
    const std::vector<size_t> a = At(args).items;
    if (name == "collections.OrderedDict") return Container(Kind::kDict, {});
    // LibTorch's pickler tags a dict or list with its type: restore_type_tag(value, "Dict[str, Any]").
    if (name == "torch.jit._pickle.restore_type_tag" && !a.empty()) return Push(a[0]);
    if (name == "torch._utils._rebuild_tensor_v2") return RebuildTensor(a);
    if (name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || At(a[0]).kind != Kind::kTensor)
        return absl::InvalidArgumentError(name + " without a tensor");
      return Push(a[0]);
    }
    if (name == "copyreg._reconstructor" && !a.empty() && At(a[0]).kind == Kind::kGlobal) {
      return PushObject(At(a[0]).text);
    }
    return PushObject(name);
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata]).
  absl::Status RebuildTensor(const std::vector<size_t>& a) {
    if (a.size() < 4 || At(a[0]).kind != Kind::kStorage || At(a[1]).kind != Kind::kInt) {
      return absl::InvalidArgumentError("_rebuild_tensor_v2 without (storage, offset, size, stride)");
    }
    PickleValue t;
    t.kind = Kind::kTensor;
    t.items = {a[0]};
    t.number = At(a[1]).number;
    for (auto [index, out] : {std::pair{a[2], &t.sizes}, std::pair{a[3], &t.strides}}) {
      if (At(index).kind != Kind::kTuple)
        return absl::InvalidArgumentError("a tensor's size or stride is not a tuple");
      for (size_t d : At(index).items) {
        if (At(d).kind != Kind::kInt)
          return absl::InvalidArgumentError("a tensor's size or stride is not integers");
        out->push_back(At(d).number);
      }
    }
    if (t.sizes.size() != t.strides.size())
      return absl::InvalidArgumentError("a tensor's size and stride differ in rank");
    return Push(Add(std::move(t)));
  }

  // persistent_load(('storage', storage_type, key, location, numel)).
  absl::Status PersistentId() {
    size_t pid = 0;
    if (absl::Status s = Pop(&pid); !s.ok()) return s;
    const PickleValue& p = At(pid);
    if (p.kind != Kind::kTuple || p.items.size() < 3 || At(p.items[0]).kind != Kind::kString ||
        At(p.items[0]).text != "storage" || At(p.items[1]).kind != Kind::kGlobal ||
        At(p.items[2]).kind != Kind::kString) {
      return absl::InvalidArgumentError("a persistent id that is not ('storage', type, key, ...)");
    }
    PickleValue v;
    v.kind = Kind::kStorage;
    v.storage_type = At(p.items[1]).text;
    if (absl::StartsWith(v.storage_type, "torch.")) v.storage_type.erase(0, 6);
    v.text = At(p.items[2]).text;
    return Push(Add(std::move(v)));
  }

  absl::Status Global() {
    std::string parts[2];
    for (std::string& part : parts) {
      const size_t end = bytes_.find('\n', pos_);
      if (end == std::string_view::npos) return absl::InvalidArgumentError("truncated global");
      part.assign(bytes_.substr(pos_, end - pos_));
      pos_ = end + 1;
    }
    PickleValue v;
    v.kind = Kind::kGlobal;
    v.text = parts[0] + "." + parts[1];
    return Push(Add(std::move(v)));
  }

  absl::Status StackGlobal() {
    size_t name = 0, module = 0;
    if (absl::Status s = Pop(&name); !s.ok()) return s;
    if (absl::Status s = Pop(&module); !s.ok()) return s;
    if (At(name).kind != Kind::kString || At(module).kind != Kind::kString)
      return absl::InvalidArgumentError("STACK_GLOBAL of non-strings");
    PickleValue v;
    v.kind = Kind::kGlobal;
    v.text = At(module).text + "." + At(name).text;
    return Push(Add(std::move(v)));
  }

  absl::Status Tuple(size_t n) {
    if (stack_.size() < n + (marks_.empty() ? 0 : marks_.back()))
      return absl::InvalidArgumentError("stack underflow");
    std::vector<size_t> items(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return Container(Kind::kTuple, std::move(items));
  }

  absl::Status Step(uint8_t op) {
    std::vector<size_t> items;
    size_t top = 0;
    uint64_t n = 0;
    switch (op) {
      case 0x80:  // PROTO
        return Read(1, &n) ? absl::OkStatus() : absl::InvalidArgumentError("truncated");
      case 0x95:  // FRAME
        return Read(8, &n) ? absl::OkStatus() : absl::InvalidArgumentError("truncated");
      case '(':
        marks_.push_back(stack_.size());
        return absl::OkStatus();
      case '0':
        return Pop(&top);
      case '1':
        return PopMark(&items);
      case '2':
        if (stack_.empty()) return absl::InvalidArgumentError("stack underflow");
        return Push(stack_.back());
      case 'N':
        return Push(AddKind(Kind::kNone));
      case 0x88:
      case 0x89: {
        PickleValue v;
        v.kind = Kind::kBool;
        v.number = op == 0x88;
        return Push(Add(std::move(v)));
      }
      case 'J':
        return PushInt(4, true);
      case 'K':
        return PushInt(1, false);
      case 'M':
        return PushInt(2, false);
      case 0x8a:  // LONG1
        if (!Read(1, &n)) return absl::InvalidArgumentError("truncated");
        if (n > 8) return absl::InvalidArgumentError(absl::StrCat("an integer of ", n, " bytes"));
        return PushInt(static_cast<size_t>(n), true);
      case 'G': {
        if (!Read(8, &n)) return absl::InvalidArgumentError("truncated float");
        n = __builtin_bswap64(n);  // BINFLOAT is big-endian.
        PickleValue v;
        v.kind = Kind::kFloat;
        std::memcpy(&v.real, &n, sizeof(n));
        return Push(Add(std::move(v)));
      }
      case 'X':  // BINUNICODE
      case 'T':  // BINSTRING
      case 'B':  // BINBYTES
        return PushString(4);
      case 0x8c:  // SHORT_BINUNICODE
      case 'U':   // SHORT_BINSTRING
      case 'C':   // SHORT_BINBYTES
        return PushString(1);
      case 0x8d:  // BINUNICODE8
      case 0x8e:  // BINBYTES8
        return PushString(8);
      case ')':
        return Container(Kind::kTuple, {});
      case 0x85:
      case 0x86:
      case 0x87:
        return Tuple(op - 0x84);
      case 't':
        if (absl::Status s = PopMark(&items); !s.ok()) return s;
        return Container(Kind::kTuple, std::move(items));
      case ']':
      case 0x8f:  // EMPTY_SET, as a list
        return Container(Kind::kList, {});
      case 'l':
      case 0x91:  // FROZENSET
        if (absl::Status s = PopMark(&items); !s.ok()) return s;
        return Container(Kind::kList, std::move(items));
      case '}':
        return Container(Kind::kDict, {});
      case 'd':
        if (absl::Status s = PopMark(&items); !s.ok()) return s;
        if (items.size() % 2 != 0) return absl::InvalidArgumentError("a key without a value");
        return Container(Kind::kDict, std::move(items));
      case 'a':
        if (absl::Status s = Pop(&top); !s.ok()) return s;
        return Append({top});
      case 'e':
      case 0x90:  // ADDITEMS
        if (absl::Status s = PopMark(&items); !s.ok()) return s;
        return Append(std::move(items));
      case 's': {
        size_t key = 0;
        if (absl::Status s = Pop(&top); !s.ok()) return s;
        if (absl::Status s = Pop(&key); !s.ok()) return s;
        return SetItems({key, top});
      }
      case 'u':
        if (absl::Status s = PopMark(&items); !s.ok()) return s;
        return SetItems(std::move(items));
      case 'q':
        return Read(1, &n) ? Memo(n) : absl::InvalidArgumentError("truncated");
      case 'r':
        return Read(4, &n) ? Memo(n) : absl::InvalidArgumentError("truncated");
      case 0x94:  // MEMOIZE
        return Memo(memo_.size());
      case 'h':
        return Read(1, &n) ? Get(n) : absl::InvalidArgumentError("truncated");
      case 'j':
        return Read(4, &n) ? Get(n) : absl::InvalidArgumentError("truncated");
      case 'c':
        return Global();
      case 0x93:
        return StackGlobal();
      case 'R':
        return Reduce();
      case 0x81: {  // NEWOBJ: cls.__new__(cls, *args)
        size_t args = 0;
        if (absl::Status s = Pop(&args); !s.ok()) return s;
        if (absl::Status s = Pop(&top); !s.ok()) return s;
        if (At(top).kind != Kind::kGlobal) return absl::InvalidArgumentError("NEWOBJ of " + Describe(top));
        return PushObject(At(top).text);
      }
      case 'b':  // BUILD: the state (an OrderedDict's _metadata, an object's attributes) is not needed.
        if (absl::Status s = Pop(&top); !s.ok()) return s;
        return stack_.size() > (marks_.empty() ? 0 : marks_.back())
                   ? absl::OkStatus()
                   : absl::InvalidArgumentError("stack underflow");
      case 'Q':
        return PersistentId();
      default:
        return absl::InvalidArgumentError("an opcode this reader does not take (not one torch.save writes)");
    }
  }

  std::string_view bytes_;
  const std::string& file_;
  size_t pos_ = 0;
  TorchPickle pickle_;
  std::vector<size_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, size_t> memo_;
};

// The value of `key` in the dict `dict`, or nullopt-like SIZE_MAX.
size_t DictGet(const TorchPickle& pickle, size_t dict, std::string_view key) {
  const std::vector<size_t>& items = pickle.values[dict].items;
  size_t found = std::numeric_limits<size_t>::max();
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    const PickleValue& k = pickle.values[items[i]];
    if (k.kind == Kind::kString && k.text == key) found = items[i + 1];  // The last one wins, as in Python.
  }
  return found;
}

// timm's clean_state_dict: the prefixes of DDP and torch.compile, wrapped in either order.
std::string CleanKey(std::string key) {
  if (absl::StartsWith(key, "module.") || absl::StartsWith(key, "_orig_mod.")) {
    for (const char* prefix : {"_orig_mod.", "module.", "_orig_mod."}) {
      if (absl::StartsWith(key, prefix)) key.erase(0, std::strlen(prefix));
    }
  }
  return key;
}

}  // namespace

std::string PickleValueDescription(const TorchPickle& pickle, size_t index) {
  const PickleValue& v = pickle.values[index];
  switch (v.kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "a bool";
    case Kind::kInt:
      return "an int";
    case Kind::kFloat:
      return "a float";
    case Kind::kString:
      return "a string";
    case Kind::kTuple:
      return "a tuple";
    case Kind::kList:
      return "a list";
    case Kind::kDict:
      return "a dict";
    case Kind::kGlobal:
      return "the global " + v.text;
    case Kind::kStorage:
      return "a storage";
    case Kind::kTensor:
      return "a tensor";
    case Kind::kObject:
      return "an object " + v.text;
  }
  return "a value";
}

absl::StatusOr<TorchPickle> ParseTorchPickle(std::string_view bytes, const std::string& file) {
  if (bytes.size() > kMaxTorchPickleBytes) {
    return absl::InvalidArgumentError(absl::StrCat("torch.save file ", file, ": data.pkl has ", bytes.size(),
                                                   " bytes, more than a state dict's ",
                                                   kMaxTorchPickleBytes));
  }
  return Parser(bytes, file).Run();
}

absl::StatusOr<PickledStateDict> PickledStateDictOf(const TorchPickle& pickle, const std::string& file) {
  size_t dict = pickle.root;
  if (pickle.values[dict].kind != Kind::kDict) {
    return absl::InvalidArgumentError(absl::StrCat(
        "torch.save file ", file, " holds ", PickleValueDescription(pickle, dict), ", not a state dict"));
  }
  for (const char* key : {"state_dict_ema", "model_ema", "state_dict", "model"}) {
    const size_t value = DictGet(pickle, dict, key);
    if (value == std::numeric_limits<size_t>::max()) continue;
    if (pickle.values[value].kind == Kind::kNone && absl::StrContains(key, "ema")) continue;
    if (pickle.values[value].kind != Kind::kDict) {
      return absl::InvalidArgumentError(absl::StrCat("torch.save file ", file, ": its '", key, "' is ",
                                                     PickleValueDescription(pickle, value),
                                                     ", not a state dict"));
    }
    dict = value;
    break;
  }
  PickledStateDict out;
  const std::vector<size_t>& items = pickle.values[dict].items;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    const PickleValue& key = pickle.values[items[i]];
    if (key.kind != Kind::kString) {
      return absl::InvalidArgumentError(absl::StrCat("torch.save file ", file, ": a state dict key is ",
                                                     PickleValueDescription(pickle, items[i])));
    }
    if (pickle.values[items[i + 1]].kind != Kind::kTensor) {
      return absl::InvalidArgumentError(
          absl::StrCat("torch.save file ", file, ": state dict entry '", key.text, "' is ",
                       PickleValueDescription(pickle, items[i + 1]), ", not a tensor"));
    }
    out.emplace_back(CleanKey(key.text), items[i + 1]);
  }
  return out;
}

int64_t TorchStorageElementSize(const std::string& storage_type) {
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"FloatStorage", 4}, {"HalfStorage", 2}, {"BFloat16Storage", 2}, {"DoubleStorage", 8},
      {"LongStorage", 8},  {"IntStorage", 4},  {"ShortStorage", 2},    {"CharStorage", 1},
      {"ByteStorage", 1},  {"BoolStorage", 1}};
  for (const auto& [name, size] : kSizes) {
    if (storage_type == name) return size;
  }
  return 0;
}

bool TensorFitsStorage(int64_t offset, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       int64_t numel) {
  if (offset < 0 || numel < 0 || sizes.size() != strides.size()) return false;
  int64_t count = 1;  // The tensor's elements: at most the storage's (no expanded views to blow up memory).
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0 || __builtin_mul_overflow(count, sizes[d], &count)) return false;
  }
  if (count == 0) return offset <= numel;  // No element is read.
  if (count > numel) return false;
  int64_t last = offset;  // The last element's index.
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t extent = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &extent) ||
        __builtin_add_overflow(last, extent, &last))
      return false;
  }
  return last < numel;
}

}  // namespace nmsparse
