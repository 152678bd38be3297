// modules/store/kv_staged.cc — the staged overlay of a schema-change scope.
#include "kv_staged.h"

#include <string>
#include <utility>

namespace quereus::store {
namespace {

// The store's walk merged with the overlay's entries in [lo, hi); an overlay entry hides
// the store's row at its key, and an overlay deletion hides it without replacing it.
class MergedIterator : public KvIterator {
 public:
  MergedIterator(std::unique_ptr<KvIterator> base, const StagedKv::Overlay& overlay, KvRange range, bool reverse)
      : base_(std::move(base)), overlay_(overlay), range_(std::move(range)), reverse_(reverse) {
    if (!reverse_) {
      ov_ = overlay_.lower_bound(std::string_view(range_.lo));
      ov_valid_ = ov_ != overlay_.end();
    } else {
      ov_ = range_.hi.empty() ? overlay_.end() : overlay_.lower_bound(std::string_view(range_.hi));
      ov_valid_ = ov_ != overlay_.begin();
      if (ov_valid_) --ov_;
    }
    bound_overlay();
    settle();
  }

  bool valid() const override { return valid_; }
  void next() override {
    if (from_overlay_) {
      if (base_->valid() && base_->key() == ov_->first) base_->next();
      step_overlay();
    } else {
      base_->next();
    }
    settle();
  }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return from_overlay_ ? std::string_view(value_) : base_->value(); }
  void check() const override { base_->check(); }

 private:
  void step_overlay() {
    if (!reverse_) {
      ++ov_;
      ov_valid_ = ov_ != overlay_.end();
    } else if (ov_ == overlay_.begin()) {
      ov_valid_ = false;
    } else {
      --ov_;
    }
    bound_overlay();
  }
  void bound_overlay() {
    if (!ov_valid_) return;
    const std::string& k = ov_->first;
    if (!reverse_) {
      if (!range_.hi.empty() && k >= range_.hi) ov_valid_ = false;
    } else if (k < range_.lo) {
      ov_valid_ = false;
    }
  }
  // Positions on the next visible entry: the nearer of the two walks, skipping deletions.
  void settle() {
    for (;;) {
      bool b = base_->valid();
      if (!b && !ov_valid_) {
        valid_ = false;
        return;
      }
      bool take_overlay;
      if (!b) {
        take_overlay = true;
      } else if (!ov_valid_) {
        take_overlay = false;
      } else {
        std::string_view bk = base_->key();
        std::string_view ok = ov_->first;
        take_overlay = reverse_ ? ok >= bk : ok <= bk;
      }
      if (!take_overlay) {
        from_overlay_ = false;
        key_ = base_->key();
        valid_ = true;
        return;
      }
      if (!ov_->second) {  // a staged deletion: hides the store's row at this key
        if (b && base_->key() == ov_->first) base_->next();
        step_overlay();
        continue;
      }
      from_overlay_ = true;
      key_ = ov_->first;
      value_ = *ov_->second;  // a copy: a later write may replace the staged value
      valid_ = true;
      return;
    }
  }

  std::unique_ptr<KvIterator> base_;
  const StagedKv::Overlay& overlay_;
  KvRange range_;
  bool reverse_;
  StagedKv::Overlay::const_iterator ov_;
  bool ov_valid_ = false;
  bool valid_ = false;
  bool from_overlay_ = false;
  std::string_view key_;
  std::string value_;
};

}  // namespace

std::optional<std::string> StagedKv::get(std::string_view key) {
  if (auto it = overlay_.find(key); it != overlay_.end()) return it->second;
  return base_.get(key);
}

std::unique_ptr<KvIterator> StagedKv::iterate(const KvRange& range, bool reverse) {
  return std::make_unique<MergedIterator>(base_.iterate(range, reverse), overlay_, range, reverse);
}

void StagedKv::write(const KvWrites& batch, bool /*sync*/) {
  struct Sink : KvSink {
    Overlay* o;
    void put(std::string_view k, std::string_view v) override {
      auto [it, fresh] = o->try_emplace(std::string(k));
      it->second.emplace(v);
    }
    void del(std::string_view k) override {
      auto [it, fresh] = o->try_emplace(std::string(k));
      it->second.reset();
    }
  } sink;
  sink.o = &overlay_;
  changed();
  batch.emit(sink);
  changed();
}

void StagedKv::commit() {
  struct All : KvWrites {
    const Overlay* o;
    bool empty() const override { return o->empty(); }
    void emit(KvSink& sink) const override {
      for (const auto& [k, v] : *o) {
        if (v) sink.put(k, *v); else sink.del(k);
      }
    }
  } all;
  all.o = &overlay_;
  base_.write(all, /*sync=*/true);
}

}  // namespace quereus::store
