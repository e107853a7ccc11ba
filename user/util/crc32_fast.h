/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * zlib's crc32() (gzip's checksum), with carry-less multiplication where
 * the CPU has it: zlib 1.2.13's table code made 14% of a json.gz trace's
 * CPU (perf, replay_bench); the folding loop is about 2.5x faster here.
 */
#ifndef FVBPF_CRC32_FAST_H
#define FVBPF_CRC32_FAST_H

#include <stddef.h>
#include <stdint.h>

/* crc32(@crc, @p, @len) as zlib computes it (start with 0). */
uint32_t crc32_fast(uint32_t crc, const unsigned char *p, size_t len);

#endif /* FVBPF_CRC32_FAST_H */
