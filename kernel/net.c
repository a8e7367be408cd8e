// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCEv2 UDP sockets of each network namespace.
 *
 * RoCEv2 lives on one well-known UDP port, so every softrdma device in a
 * namespace shares that namespace's socket pair (IPv4 and IPv6). The
 * sockets exist while at least one device of the namespace does: a
 * namespace without softrdma devices keeps port 4791 free, e.g. for
 * rdma_rxe.
 */
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "srdma.h"

/**
 * struct srdma_net - softrdma state of one network namespace
 * @sock4: IPv4 socket bound to the RoCEv2 port, NULL when unused
 * @sock6: IPv6 socket, NULL when unused or IPv6 is disabled
 * @users: devices attached to this namespace
 * @devs: those devices, for the receive path (RCU; writers hold
 *	srdma_net_lock)
 *
 * Lifetime: allocated and freed with the namespace by the pernet core.
 * Devices attach at creation and detach in dealloc_driver; each device
 * holds its netdev until then and namespace teardown waits for netdev
 * references before pernet exit, so @users is zero by srdma_net_ns_exit().
 */
struct srdma_net {
	struct socket *sock4;
	struct socket *sock6;
	unsigned int users;
	struct list_head devs;
};

static unsigned int srdma_net_id;
static DEFINE_MUTEX(srdma_net_lock);	/* serialises attach/detach */

static struct socket *srdma_sock_open(struct net *net, bool ipv6)
{
	struct udp_port_cfg port_cfg = {
		.local_udp_port = htons(SRDMA_ROCE_UDP_PORT),
	};
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.encap_type = 1,
		.encap_rcv = srdma_udp_rcv,
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		port_cfg.family = AF_INET6;
		port_cfg.ipv6_v6only = 1;
		/* RoCEv2 senders may leave the UDP checksum zero: ICRC covers it */
		port_cfg.use_udp6_rx_checksums = 0;
	} else {
		port_cfg.family = AF_INET;
	}

	err = udp_sock_create(net, &port_cfg, &sock);
	if (err)
		return ERR_PTR(err);

	srdma_udp_tunnel_setup(net, sock, &tnl_cfg);
	return sock;
}

static void srdma_sock_close(struct socket **sockp)
{
	if (*sockp) {
		srdma_udp_tunnel_release(*sockp);
		*sockp = NULL;
	}
}

/**
 * srdma_net_attach - make sure the device's namespace has its RoCEv2 sockets
 * @sdev: the device; joins the namespace's device list
 *
 * Return: 0, or -EADDRINUSE when another owner (e.g. rdma_rxe) holds the
 * port in this namespace, or another errno from socket creation.
 */
int srdma_net_attach(struct srdma_dev *sdev)
{
	struct net *net = sdev->net;
	struct srdma_net *snet = net_generic(net, srdma_net_id);
	struct socket *sock;
	int err = 0;

	mutex_lock(&srdma_net_lock);
	if (snet->users) {
		snet->users++;
		goto out;
	}

	sock = srdma_sock_open(net, false);
	if (IS_ERR(sock)) {
		err = PTR_ERR(sock);
		pr_err("softrdma: cannot bind UDP port %d: %d\n",
		       SRDMA_ROCE_UDP_PORT, err);
		goto out;
	}
	snet->sock4 = sock;

	sock = srdma_sock_open(net, true);
	if (IS_ERR(sock)) {
		err = PTR_ERR(sock);
		/* IPv6 disabled in this kernel: run IPv4-only */
		if (err != -EAFNOSUPPORT && err != -EPFNOSUPPORT) {
			pr_err("softrdma: cannot bind UDP/IPv6 port %d: %d\n",
			       SRDMA_ROCE_UDP_PORT, err);
			srdma_sock_close(&snet->sock4);
			goto out;
		}
		sock = NULL;
		err = 0;
	}
	snet->sock6 = sock;
	snet->users = 1;
out:
	if (!err)
		list_add_tail_rcu(&sdev->net_node, &snet->devs);
	mutex_unlock(&srdma_net_lock);
	return err;
}

/*
 * Drop one device's use of its namespace's sockets; the last user closes
 * them. On return no receive path can still see @sdev.
 */
void srdma_net_detach(struct srdma_dev *sdev)
{
	struct srdma_net *snet = net_generic(sdev->net, srdma_net_id);

	mutex_lock(&srdma_net_lock);
	list_del_rcu(&sdev->net_node);
	synchronize_rcu();
	if (!--snet->users) {
		srdma_sock_close(&snet->sock6);
		srdma_sock_close(&snet->sock4);
	}
	mutex_unlock(&srdma_net_lock);
}

/**
 * srdma_net_rx_dev - the device a datagram counts against
 * @net: the namespace it came in on
 * @ndev: the netdev it arrived on
 *
 * The device over @ndev, else (e.g. over the loopback device) the
 * namespace's first one. Caller holds rcu_read_lock().
 *
 * Return: the device, or NULL while the namespace has none.
 */
struct srdma_dev *srdma_net_rx_dev(struct net *net,
				   const struct net_device *ndev)
{
	struct srdma_net *snet = net_generic(net, srdma_net_id);
	struct srdma_dev *sdev;

	list_for_each_entry_rcu(sdev, &snet->devs, net_node)
		if (sdev->ndev == ndev)
			return sdev;
	return list_first_or_null_rcu(&snet->devs, struct srdma_dev,
				      net_node);
}

static int __net_init srdma_net_ns_init(struct net *net)
{
	struct srdma_net *snet = net_generic(net, srdma_net_id);

	INIT_LIST_HEAD(&snet->devs);
	return 0;
}

static void __net_exit srdma_net_ns_exit(struct net *net)
{
	struct srdma_net *snet = net_generic(net, srdma_net_id);

	/* Every device has detached (see struct srdma_net); be safe anyway. */
	mutex_lock(&srdma_net_lock);
	snet->users = 0;
	srdma_sock_close(&snet->sock6);
	srdma_sock_close(&snet->sock4);
	mutex_unlock(&srdma_net_lock);
}

static struct pernet_operations srdma_net_ops = {
	.init = srdma_net_ns_init,
	.exit = srdma_net_ns_exit,
	.id = &srdma_net_id,
	.size = sizeof(struct srdma_net),
};

/*
 * A pernet subsystem (not device) so that our exit runs after the
 * namespace's netdevs are gone.
 */
int srdma_net_init(void)
{
	return register_pernet_subsys(&srdma_net_ops);
}

void srdma_net_exit(void)
{
	unregister_pernet_subsys(&srdma_net_ops);
}
