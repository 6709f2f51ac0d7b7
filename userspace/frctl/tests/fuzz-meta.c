// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: what check, repair and dump do, on arbitrary PM images.
 *
 * Besides "never crash" (ASan, UBSan) it asserts the recovery contract that
 * frctl repair relies on: after FR_RECOVER_REPAIR succeeded, a CHECK finds
 * neither corrupt tags nor pending recovery.
 *
 *   make tests/fuzz-meta && tests/fuzz-meta -max_len=65536 CORPUS...
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "frctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void json_consume(struct json_object *o)
{
	const char *s = json_object_to_json_string(o);

	if (!s)
		abort();
	json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fr_recovery_report rep, after;
	struct tag_counts tc;
	struct fr_meta m;
	void *buf;

	if (size > (1 << 20))
		return 0;
	/* The core stores tag words through aligned 8-byte pointers. */
	if (posix_memalign(&buf, 4096, size ? size : 1))
		return 0;
	memcpy(buf, data, size);
	if (meta_open(&m, buf, size)) {
		json_consume(meta_sb_json(&m));
		(void)sb_state_exit(m.state);
		goto out;
	}
	json_consume(meta_sb_json(&m));
	meta_count_tags(&m, &tc);
	json_consume(meta_counts_json(&tc));
	json_consume(meta_tags_json(&m));
	if (meta_recover(&m, FR_RECOVER_CHECK, &rep))
		goto out;
	json_consume(meta_report_json(&rep));
	if (meta_recover(&m, FR_RECOVER_REPAIR, &rep))
		goto out;
	if (meta_recover(&m, FR_RECOVER_CHECK, &after))
		abort();
	if (after.corrupt_tags || report_pending(&after))
		abort();
	/* Repair is idempotent: a second one finds nothing to store. */
	if (meta_recover(&m, FR_RECOVER_REPAIR, &after) || after.stores)
		abort();
out:
	meta_close(&m);
	free(buf);
	return 0;
}
