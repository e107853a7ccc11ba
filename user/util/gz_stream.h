/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A write-only FILE that gzips (zlib, RFC 1952) into another FILE, so the
 * JSON trace writer streams into a .json.gz unchanged.
 */
#ifndef FVBPF_GZ_STREAM_H
#define FVBPF_GZ_STREAM_H

#include <stdio.h>

/* NULL on failure (errno set).  @dst stays open and is not closed. */
FILE *gz_stream_open(FILE *dst);
/* Finish the gzip stream and close: 0, or -errno on any error. */
int gz_stream_close(FILE *gz);

#endif /* FVBPF_GZ_STREAM_H */
