/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The status line's fields after the state word, one per line, in the order
 * the target prints them: FR_STATUS(name, since, keyed, json, what). since:
 * the target version that added it (fields of one version come together);
 * keyed: 0 for a positional field, 1 for one printed as name=value (every
 * field added from now on: a parser that does not know it skips it by
 * name); json: frctl status --json's key. No include guard: included once
 * per use, with FR_STATUS defined (fr-interface.h says how).
 */
FR_STATUS(chunk_sectors, 100, 0, "chunk_sectors", "chunk size in 512-byte sectors")
FR_STATUS(chunks_total, 100, 0, "chunks_total", "PM chunks")
FR_STATUS(chunks_valid, 100, 0, "chunks_valid", "chunks holding data (clean or dirty)")
FR_STATUS(chunks_dirty, 100, 0, "chunks_dirty", "chunks the origin does not hold yet")
FR_STATUS(read_hits, 100, 0, "read_hits", "chunks read from PM")
FR_STATUS(read_misses, 100, 0, "read_misses", "chunks read from the origin")
FR_STATUS(write_hits, 100, 0, "write_hits", "chunks written that PM held already")
FR_STATUS(write_misses, 100, 0, "write_misses", "chunks written that PM did not hold")
FR_STATUS(forced_writebacks, 100, 0, "forced_writebacks",
	  "dirty chunks written back early because a write needed their place")
FR_STATUS(writeback_rounds, 100, 0, "writeback_rounds",
	  "background writeback passes that wrote something back")
FR_STATUS(chunks_written_back, 100, 0, "chunks_written_back",
	  "chunks written back to the origin")
FR_STATUS(origin_errors, 100, 0, "origin_errors", "failed origin I/O")
FR_STATUS(pm_errors, 100, 0, "pm_errors", "failed PM reads (media errors)")
FR_STATUS(read_fills, 100, 0, "read_fills",
	  "clean chunks installed on PM after an origin read")
FR_STATUS(cleaner, 100, 0, "cleaner", "1 in cleaner mode, else 0")
FR_STATUS(unreadable, 103, 0, "unreadable_chunks",
	  "dirty chunks whose data writeback could not read from PM")
FR_STATUS(bad_chunks, 104, 0, "bad_chunks",
	  "PM chunks retired because they lie on known bad blocks")
FR_STATUS(lost_slots, 104, 0, "lost_slots",
	  "slots whose tags were on bad blocks at load")
FR_STATUS(prefetched, 106, 0, "prefetched",
	  "chunks read ahead from the origin by prefetch")
FR_STATUS(pinned_waits, 109, 0, "pinned_waits",
	  "writes that waited for the writeback of the chunk they would store into")
FR_STATUS(drains, 113, 1, "drains",
	  "times writes collided so often that writeback began draining the PM every tick")
FR_STATUS(around_stream, 116, 1, "around_stream",
	  "writes sent around PM to the origin as part of a sequential stream")
FR_STATUS(around_background, 116, 1, "around_background",
	  "page-cache writeback sent around PM to the origin")
FR_STATUS(around_refused, 116, 1, "around_refused",
	  "writes admission would have sent around that went to PM (a dirty copy, or a slot in flight past its wait)")
FR_STATUS(set_ways, 118, 1, "set_ways",
	  "chunks a slot: 2 (pairs), or a set's 4 or 8")
FR_STATUS(around_waited, 120, 1, "around_waited",
	  "writes admission sent around or meant to that first waited for an origin write of their slots in flight")
