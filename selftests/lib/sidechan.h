/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The side channel of the two-host tests: a TCP connection between the
 * peers, set up with a wait for the later one, and a request/reply
 * framing on it (a header, then the bytes it counts).
 */
#ifndef SRDMA_SIDECHAN_H
#define SRDMA_SIDECHAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What goes before every request and reply, as it is in memory. */
struct sc_hdr {
	int32_t val;	/* request: its operation; reply: 0 or an errno */
	uint32_t len;	/* bytes that follow */
};

/* Send (@wr) or receive all @len bytes. Return: 0 or an errno. */
int sc_io_all(int fd, void *p, size_t len, bool wr);

/* No Nagle delay, and send and receive time out after @timeout_ms. */
void sc_sock_opts(int fd, int timeout_ms);

/*
 * A connection to @host:@port, retried for @wait_s seconds while the
 * server is not up yet; -1 after a TAP diagnostic.
 */
int sc_connect(const char *host, const char *port, int wait_s);

/* One client on @port (IPv6 and IPv4), waited for @wait_s seconds. */
int sc_accept(const char *port, int wait_s);

/*
 * Request @op with @in; the reply's bytes go to @out, whose room
 * @outlen holds, then what came. Return: 0 or the errno of the
 * connection (EPROTO: the reply did not fit); @result gets the reply's
 * value.
 */
int sc_call(int fd, int op, const void *in, size_t inlen, void *out,
	    size_t *outlen, int *result);

/*
 * Serve one request: @op gets the request and its bytes, fills @out
 * (room in *@outlen, then what it wrote) and returns the reply's value.
 * Return: 0 or an errno.
 */
typedef int (*sc_handler)(void *arg, int op, const void *in, size_t inlen,
			  void *out, size_t *outlen);

/*
 * Answer requests through @fn, with @in and @out as buffers, until one
 * with the value @bye (answered with 0 and no bytes); @nreq counts them.
 * Return: 0 after @bye, else the connection's errno (after a TAP
 * diagnostic).
 */
int sc_serve(int fd, sc_handler fn, void *arg, void *in, size_t inroom,
	     void *out, size_t outroom, int bye, unsigned long *nreq);

#endif /* SRDMA_SIDECHAN_H */
