// register_tiled's cost model (register_tiled_model.hpp).
#include "algorithms/models/register_tiled_model.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "algorithms/models/split_k.hpp"

namespace mmlab {

namespace {

struct Candidate {
  RegisterTile kernel;  // split 1; each is priced at every split
  int occupancy;        // on the H100
  double a, b;
};

#define MMLAB_CANDIDATE(BM, BN, WM, WN, S, O, A, B) {{BM, BN, 16, WM, WN, S, 1}, O, A, B},
const Candidate kCandidates[] = {MMLAB_REGISTER_TILED_FITTED(MMLAB_CANDIDATE)};
#undef MMLAB_CANDIDATE
constexpr double kLaunchMs = 0.022876, kSplitMsPerElement = 3.6353e-9, kPadMsPerElement = 5.5980e-9;
constexpr long kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16};
constexpr double kNearlyCheapest = 1.08;
const RegisterTile kPreferred = {128, 128, 16, 32, 128, 2, 1};

double blocks_of(long n, long tile) { return double((n + tile - 1) / tile); }

struct Priced {
  RegisterTile choice;
  double ms;
  bool fills_a_wave;
};

Priced price(const Candidate& c, int occupancy, long split, const Problem& p, double sms) {
  RegisterTile ch = c.kernel;
  ch.split = split;
  const SplitK split_k_of = split_k(p.k, ch.bk, split);
  const double tiles = blocks_of(p.m, ch.bm) * blocks_of(p.n, ch.bn);
  const double blocks = tiles * double(split_k_of.blocks), steps = double(split_k_of.k_per_block(ch.bk) / 16);
  const double o = occupancy, per_wave = o * sms;
  const double full = std::floor(blocks / per_wave), rest = blocks - full * per_wave;
  auto wave = [&](double j) {  // j blocks per SM
    const double l = o > 1 ? (j - 1) / (o - 1) : 0;
    return steps * (c.a * (1 - l) + o * c.b * l);
  };
  double ms = full * wave(o) + (rest > 0 ? wave(std::ceil(rest / sms)) : 0) + kLaunchMs;
  if (split > 1) ms += kSplitMsPerElement * double(p.m) * double(p.n) * double(split);
  ms += kPadMsPerElement *
        ((p.k % 4 ? double(p.m) * double(p.k) : 0) + (p.n % 4 ? double(p.k) * double(p.n) : 0));
  return {ch, ms, blocks >= per_wave};
}

}  // namespace

double register_tile_ms(const RegisterTile& t, const Problem& p, double sms, const std::vector<int>& occupancy) {
  for (std::size_t i = 0; i < std::size(kCandidates); ++i) {
    const RegisterTile& c = kCandidates[i].kernel;
    if (c.bm == t.bm && c.bn == t.bn && c.bk == t.bk && c.wm == t.wm && c.wn == t.wn && c.stages == t.stages)
      return price(kCandidates[i], occupancy[i], t.split, p, sms).ms;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

ModelTerms register_tiled_model(const RegisterTile& tile, const Params& q, const Problem& p, double sms,
                                const std::vector<int>& occupancy) {
  static const LinearFits fits = {{"manual", "", "", -0.0119334, 1.02696, 0, 0}};
  const double ms = register_tile_ms(tile, p, sms, occupancy);
  return {{ms, 0, 0}, std::isnan(ms) ? nullptr : fit_of(fits, q)};
}

std::vector<int> fitted_occupancies() {
  std::vector<int> out;
  for (const Candidate& c : kCandidates) out.push_back(c.occupancy);
  return out;
}

RegisterTile cheapest_register_tile(const Problem& p, double sms, const std::vector<int>& occupancy,
                                    double* ms) {
  std::vector<Priced> all;
  for (std::size_t i = 0; i < std::size(kCandidates); ++i)
    for (long split : kSplits)
      if (split == 1 || (p.k + split - 1) / split >= 16)
        all.push_back(price(kCandidates[i], occupancy[i], split, p, sms));
  const auto cheaper = [](const Priced& x, const Priced& y) { return x.ms < y.ms; };
  std::sort(all.begin(), all.end(), cheaper);
  for (const Priced& x : all) {
    if (x.ms > all.front().ms * kNearlyCheapest) break;
    const RegisterTile& c = x.choice;
    if (c.bm == kPreferred.bm && c.bn == kPreferred.bn && c.wm == kPreferred.wm && c.wn == kPreferred.wn &&
        x.fills_a_wave) {
      if (ms) *ms = x.ms;
      return c;
    }
  }
  if (ms) *ms = all.front().ms;
  return all.front().choice;
}

}  // namespace mmlab
