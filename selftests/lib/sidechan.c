// SPDX-License-Identifier: GPL-2.0
/*
 * The side channel of sidechan.h.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "ktap.h"
#include "sidechan.h"

static uint64_t sc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sc_io_all(int fd, void *p, size_t len, bool wr)
{
	ssize_t n;

	while (len) {
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? errno : EPIPE;
		p = (uint8_t *)p + n;
		len -= n;
	}
	return 0;
}

void sc_sock_opts(int fd, int timeout_ms)
{
	struct timeval tv = { .tv_sec = timeout_ms / 1000 };
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int sc_connect(const char *host, const char *port, int wait_s)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	uint64_t deadline = sc_now_ms() + wait_s * 1000ull;
	int fd = -1, err;

	do {
		err = getaddrinfo(host, port, &hints, &ai);
		if (err) {
			ktap_print("%s: %s", host, gai_strerror(err));
			return -1;
		}
		for (a = ai; a && fd < 0; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype, 0);
			if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
				close(fd);
				fd = -1;
			}
		}
		freeaddrinfo(ai);
		if (fd < 0)
			sleep(1);
	} while (fd < 0 && sc_now_ms() < deadline);
	if (fd < 0)
		ktap_print("no server at %s port %s after %d s", host, port,
			   wait_s);
	return fd;
}

int sc_accept(const char *port, int wait_s)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	struct pollfd pfd = { .events = POLLIN };
	int one = 1, fd = -1;

	sa.sin6_port = htons(atoi(port));
	pfd.fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (pfd.fd < 0 ||
	    setsockopt(pfd.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(pfd.fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(pfd.fd, 1)) {
		ktap_print("listen on port %s: %s", port, strerror(errno));
	} else if (poll(&pfd, 1, wait_s * 1000) != 1) {
		ktap_print("no client in %d s", wait_s);
	} else {
		fd = accept(pfd.fd, NULL, NULL);
	}
	if (pfd.fd >= 0)
		close(pfd.fd);
	return fd;
}

int sc_call(int fd, int op, const void *in, size_t inlen, void *out,
	    size_t *outlen, int *result)
{
	struct sc_hdr h = { .val = op, .len = inlen };
	int ret;

	ret = sc_io_all(fd, &h, sizeof(h), true) ?:
	      sc_io_all(fd, (void *)in, inlen, true) ?:
	      sc_io_all(fd, &h, sizeof(h), false);
	if (!ret && h.len > *outlen)
		ret = EPROTO;
	if (!ret)
		ret = sc_io_all(fd, out, h.len, false);
	if (ret)
		return ret;
	*outlen = h.len;
	*result = h.val;
	return 0;
}

int sc_serve(int fd, sc_handler fn, void *arg, void *in, size_t inroom,
	     void *out, size_t outroom, int bye, unsigned long *nreq)
{
	struct sc_hdr h;
	size_t outlen;
	int op, ret;

	for (;;) {
		ret = sc_io_all(fd, &h, sizeof(h), false);
		if (!ret && h.len > inroom)
			ret = EPROTO;
		if (!ret)
			ret = sc_io_all(fd, in, h.len, false);
		if (ret)
			break;
		(*nreq)++;
		op = h.val;
		outlen = 0;
		if (op == bye) {
			ret = 0;
		} else {
			outlen = outroom;
			ret = fn(arg, op, in, h.len, out, &outlen);
		}
		h.val = ret;
		h.len = outlen;
		ret = sc_io_all(fd, &h, sizeof(h), true) ?:
		      sc_io_all(fd, out, outlen, true);
		if (ret)
			break;
		if (op == bye)
			return 0;
	}
	ktap_print("client connection: %s", strerror(ret));
	return ret;
}
