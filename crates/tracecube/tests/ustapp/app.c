/* A multi-threaded instrumented program for the live end-to-end test.
 * usage: app NTHREADS ITERS [SLEEP_US_EVERY_100]
 * Build with -DPROVIDER=tclive_a (or tclive_b: a second program whose event classes
 * reach the session's metadata later). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tclive_tp.h"

static long iters, pause_us;

static void *work(void *arg)
{
	int w = (int)(long)arg;
	char buf[32];
	for (long i = 0; i < iters; i++) {
		lttng_ust_tracepoint(PROVIDER, tick, w, i);
		if (i % 5 == 0) {
			snprintf(buf, sizeof buf, "w%d-%ld", w, i);
			lttng_ust_tracepoint(PROVIDER, note, w, buf);
		}
		if (pause_us && i % 100 == 99)
			usleep(pause_us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	iters = argc > 2 ? atol(argv[2]) : 1000;
	pause_us = argc > 3 ? atol(argv[3]) : 0;
	pthread_t t[64];
	if (n > 64)
		n = 64;
	for (int k = 0; k < n; k++)
		pthread_create(&t[k], NULL, work, (void *)(long)k);
	for (int k = 0; k < n; k++)
		pthread_join(t[k], NULL);
	return 0;
}
