/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tunables, one per line: FR_TUNABLE(name, min, max, default, unit,
 * what). No include guard: included once per use, with FR_TUNABLE defined
 * (fr-interface.h says how).
 */
FR_TUNABLE(writeback_period, 0, FR_MAX_PERIOD_MS, 10, "ms",
	   "period of the background writeback (0: only by watermark or flush)")
FR_TUNABLE(writeback_defer, 0, FR_MAX_PERIOD_MS, 30000, "ms",
	   "how long writes that keep coming may put the periodic writeback off (0: never)")
FR_TUNABLE(writeback_idle, 0, FR_MAX_PERIOD_MS, 100, "ms",
	   "no write this long makes the full writeback pass due (0: only its age)")
FR_TUNABLE(high_watermark, 0, 100, 50, "%",
	   "dirty share of the PM that starts writeback at once")
FR_TUNABLE(low_watermark, 0, 100, 25, "%",
	   "dirty share below which watermark writeback stops")
FR_TUNABLE(writeback_jobs, 1, 1024, FR_WB_JOBS_DEFAULT, "chunks",
	   "chunks per writeback batch (one origin flush each)")
FR_TUNABLE(prefetch_kib, 0, FR_PREFETCH_MAX_KIB, FR_PREFETCH_MAX_KIB, "KiB",
	   "largest read-ahead window of a sequential read miss (0: none)")
FR_TUNABLE(admit_stream_kib, 0, FR_MAX_STREAM_KIB, 0, "KiB",
	   "a sequential write stream past this goes around PM, to the origin (0: off)")
FR_TUNABLE(admit_background, 0, 100, 0, "%",
	   "dirty share from which page-cache writeback goes around PM (0: off)")
