// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* gz_stream (user/util/gz_stream.c) against zlib's own gzip wrapper: the
 * same bytes for the same input, whatever the sizes of the writes; and
 * crc32_fast() against zlib's crc32() at every alignment and length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/crc32_fast.h"
#include "util/gz_stream.h"
#include "unit.h"

/* Trace-like text with some noise: compressible, not trivially. */
static unsigned char *make_input(size_t n)
{
	unsigned char *p = malloc(n ? n : 1);
	size_t i;

	for (i = 0; p && i < n; i++)
		p[i] = (i % 97 < 60) ? (unsigned char)("{\"ph\":\"X\",\"ts\":"[i % 15]) :
				       (unsigned char)(rand() & 0xff);
	return p;
}

/* zlib's gzip wrapper, level 2, windowBits 15 + 16: the reference. */
static unsigned char *zlib_gzip(const unsigned char *in, size_t n, size_t *outn)
{
	z_stream z = { 0 };
	size_t cap = n + n / 8 + 256;
	unsigned char *out = malloc(cap);

	CHECK(out && deflateInit2(&z, 2, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	CHECK_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
	*outn = cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

/* gz_stream, fed in writes of @chunk bytes. */
static char *ours(const unsigned char *in, size_t n, size_t chunk, size_t *outn)
{
	char *buf = NULL;
	size_t len = 0, done, k;
	FILE *f = open_memstream(&buf, &len);
	FILE *gz = f ? gz_stream_open(f) : NULL;

	CHECK(gz != NULL);
	if (!gz)
		abort();
	setvbuf(gz, NULL, _IONBF, 0);
	for (done = 0; done < n; done += k) {
		k = n - done < chunk ? n - done : chunk;
		CHECK_EQ(fwrite(in + done, 1, k, gz), k);
	}
	CHECK_EQ(gz_stream_close(gz), 0);
	fclose(f);
	*outn = len;
	return buf;
}

static void test_same_bytes_as_zlib(void)
{
	static const size_t sizes[] = { 0, 1, 15, 16, 63, 64, 65, 1000, 65536, 65537, 3 << 20 };
	static const size_t chunks[] = { 1, 7, 4096, 1 << 20 };
	size_t i, j, rn, on;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *in = make_input(sizes[i]), *ref = zlib_gzip(in, sizes[i], &rn);

		for (j = 0; j < sizeof(chunks) / sizeof(chunks[0]); j++) {
			char *got;

			if (chunks[j] == 1 && sizes[i] > 70000)
				continue; /* a byte at a time: slow, the small sizes cover it */
			got = ours(in, sizes[i], chunks[j], &on);
			CHECK_EQ(on, rn);
			if (on != rn || memcmp(got, ref, rn))
				printf("# size %zu chunk %zu: not zlib's bytes\n", sizes[i], chunks[j]);
			CHECK(on == rn && !memcmp(got, ref, rn));
			free(got);
		}
		free(in);
		free(ref);
	}
}

static void test_crc_matches_zlib(void)
{
	size_t n = 1 << 17, i, off, len;
	unsigned char *p = make_input(n + 64);
	uint32_t seed;

	for (i = 0; i < 2000; i++) {
		off = (size_t)rand() % 64;
		len = (size_t)rand() % (i < 1000 ? 300 : n);
		seed = i % 3 ? (uint32_t)rand() : 0;
		if (crc32_fast(seed, p + off, len) != (uint32_t)crc32(seed, p + off, (uInt)len)) {
			printf("# crc of %zu bytes at %zu differs\n", len, off);
			CHECK(0);
			break;
		}
	}
	free(p);
}

int main(void)
{
	srand(7);
	RUN(test_same_bytes_as_zlib);
	RUN(test_crc_matches_zlib);
	UNIT_DONE();
}
