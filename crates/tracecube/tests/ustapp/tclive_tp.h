/* Tracepoint provider of the live end-to-end test (tests/live_lttng.rs). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER PROVIDER

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tclive_tp.h"

#if !defined(TCLIVE_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TCLIVE_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(PROVIDER, tick,
	LTTNG_UST_TP_ARGS(int, worker, long, i),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, worker, worker)
		lttng_ust_field_integer(long, i, i)
	)
)

LTTNG_UST_TRACEPOINT_EVENT(PROVIDER, note,
	LTTNG_UST_TP_ARGS(int, worker, const char *, text),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, worker, worker)
		lttng_ust_field_string(text, text)
	)
)

#endif

#include <lttng/tracepoint-event.h>
