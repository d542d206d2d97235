// Stage F3: the ordered (deterministic) split-K fixup of blocks/splitk.cuh, on its own: S CTAs per 128 x BN tile each
// hold a partial fp32 tile (here: host data loaded into registers, standing in for a TMEM accumulator), store it into
// their workspace slot, arrive on the tile's counter (tile_arrive: fence.acq_rel, named barrier, atom.inc with bound
// S-1, barrier, fence); the last arriver sums the S partials in split order and writes the tile. Plain CUDA + PTX
// of sm_90: it builds for sm_90a (H100 GPU test) as for sm_100a.
//
// CTA (tile, split): blockIdx.x = tile, blockIdx.z = rev ? S-1-z : z (rev reverses which split finishes last on the
// emulator, which runs CTAs in index order). 128 threads, thread = tile row; out: fp32 bits (tiles, 128, BN).
// BROKEN (f3.py BROKEN): 1 the last arriver sums in arrival order (its own partial first); 2 the FIRST arriver does
// the fixup; 3 counter bound S (it never wraps to 0); 4 a split stores into the next split's slot.
#include "blocks/splitk.cuh"

#ifndef BN
#define BN 16
#endif
#ifndef BROKEN
#define BROKEN 0
#endif
constexpr unsigned MAX_SPLITS = 8;   // the stage's cases use up to 4 splits (f3.py checks splits <= MAX_SPLITS)

using namespace ptxlab;

extern "C" __global__ void __launch_bounds__(128, 1)
f3_splitk(const unsigned* partials, float* ws, unsigned* counters, unsigned* out, unsigned splits, unsigned rev) {
  __shared__ unsigned slot_word;
  const unsigned tile = blockIdx.x, tiles = gridDim.x, row = threadIdx.x;
  const unsigned split = rev ? splits - 1u - blockIdx.z : blockIdx.z;
  const unsigned long long slot_stride = (unsigned long long)tiles * 128u * BN;     // floats between splits' slots
  float* ws_tile0 = ws + (unsigned long long)tile * 128u * BN;                       // slot of split 0 of this tile
  unsigned mine[BN];
  const unsigned* src = partials + (((unsigned long long)split * tiles + tile) * 128u + row) * BN;
  for (unsigned j = 0; j < BN; ++j) mine[j] = src[j];
#if BROKEN == 4
  const unsigned store_slot = (split + 1u) % splits;
#else
  const unsigned store_slot = split;
#endif
  for (unsigned n4 = 0; n4 < BN / 4; ++n4)
    splitk::st_v4(splitk::slot_v4(ws_tile0 + store_slot * slot_stride, n4, row), mine[4 * n4], mine[4 * n4 + 1],
                  mine[4 * n4 + 2], mine[4 * n4 + 3]);
#if BROKEN == 3
  const unsigned bound_splits = splits + 1u;
#else
  const unsigned bound_splits = splits;
#endif
#if BROKEN == 2
  splitk::fence_acq_rel_gpu();
  splitk::bar_sync(1, 128);
  if (row == 0) slot_word = splitk::atom_inc_acq_rel(counters + tile, bound_splits - 1u);
  splitk::bar_sync(1, 128);
  const bool last = slot_word == 0u;
  if (last) splitk::fence_acq_rel_gpu();
#else
  const bool last = splitk::tile_arrive(counters + tile, bound_splits, &slot_word, row == 0, 1, 128);
#endif
  if (!last) return;
  unsigned* o = out + ((unsigned long long)tile * 128u + row) * BN;
  for (unsigned n0 = 0; n0 < BN; n0 += 16) {
    unsigned m16[16], acc[16];
    for (unsigned i = 0; i < 16; ++i) m16[i] = mine[n0 + i];
#if BROKEN == 1
    for (unsigned n4 = 0; n4 < 4; ++n4) {
      unsigned a4[4] = {m16[4 * n4], m16[4 * n4 + 1], m16[4 * n4 + 2], m16[4 * n4 + 3]};
      for (unsigned s = 0; s < splits; ++s) {
        if (s == split) continue;
        unsigned v[4];
        splitk::ld_relaxed_v4(splitk::slot_v4(ws_tile0 + s * slot_stride, n0 / 4u + n4, row), v);
        splitk::add_v4(a4, v);
      }
      for (unsigned i = 0; i < 4; ++i) acc[4 * n4 + i] = a4[i];
    }
#else
    splitk::ordered_sum_16<MAX_SPLITS>(ws_tile0, slot_stride, splits, split, n0 / 4u, row, m16, acc);
#endif
    for (unsigned i = 0; i < 16; ++i) o[n0 + i] = acc[i];
  }
}
