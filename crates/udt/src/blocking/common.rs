//! The methods [`super::UdtStream`] and [`super::UdtMessageSocket`] share (options,
//! statistics, addresses), written once as a macro over their `socket` field.

/// Implement the shared socket methods and [`crate::Source`] for a type with a
/// `socket: Socket` field.
macro_rules! common_socket_methods {
    ($ty:ty) => {
        impl $ty {
            /// Begin a graceful close without waiting and without giving up the handle:
            /// later writes fail, queued data keeps draining up to the linger time, then the
            /// peer is told. Data already received can still be read; after it, reads fail
            /// with `NotConnected`. (UDT4 has no half-close; this is its `close` in
            /// non-blocking mode, keeping the handle.)
            pub fn shutdown(&self) -> std::io::Result<()> {
                self.socket.shutdown();
                Ok(())
            }

            /// `close` through a shared reference, for handles shared between threads (as
            /// UDT4's integer handles are): begin closing, then, with UDT_SNDSYN on, wait
            /// until unsent data is acknowledged or the linger time runs out and the peer is
            /// told. Other threads blocked on the socket wake with an error.
            pub fn close_shared(&self) -> std::io::Result<()> {
                self.socket.close()
            }

            /// UDT_RCVTIMEO: how long a blocking receive may wait (`None`: forever, the
            /// default). Expiry gives `TimedOut`; zero is refused.
            pub fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
                self.socket.set_read_timeout(timeout)
            }

            /// UDT_SNDTIMEO: how long a blocking send or flush may wait (`None`: forever, the
            /// default).
            pub fn set_write_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
                self.socket.set_write_timeout(timeout)
            }

            /// The current UDT_RCVTIMEO.
            pub fn read_timeout(&self) -> Option<Duration> {
                self.socket.read_timeout()
            }

            /// The current UDT_SNDTIMEO.
            pub fn write_timeout(&self) -> Option<Duration> {
                self.socket.write_timeout()
            }

            /// UDT_SNDSYN: whether sends block (default true). Off, a send that finds the
            /// buffer full fails with `WouldBlock`, and `close` lingers in the background.
            pub fn set_send_blocking(&self, on: bool) {
                self.socket.set_send_blocking(on);
            }

            /// The current UDT_SNDSYN.
            pub fn send_blocking(&self) -> bool {
                self.socket.send_blocking()
            }

            /// UDT_RCVSYN: whether receives block (default true). Off, a receive with
            /// nothing to read fails with `WouldBlock`.
            pub fn set_recv_blocking(&self, on: bool) {
                self.socket.set_recv_blocking(on);
            }

            /// The current UDT_RCVSYN.
            pub fn recv_blocking(&self) -> bool {
                self.socket.recv_blocking()
            }

            /// `set_send_blocking(!on)` and `set_recv_blocking(!on)` together, as
            /// `std::net` sockets do.
            pub fn set_nonblocking(&self, on: bool) -> std::io::Result<()> {
                self.socket.set_send_blocking(!on);
                self.socket.set_recv_blocking(!on);
                Ok(())
            }

            /// UDT_MAXBW while connected: cap the sending rate, bytes per second (`None` or
            /// `Some(0)`: unlimited, the default). Takes effect with the next packet.
            pub fn set_max_bandwidth(&self, bytes_per_sec: Option<u64>) {
                self.socket.set_max_bandwidth(bytes_per_sec);
            }

            /// The current UDT_MAXBW.
            pub fn max_bandwidth(&self) -> Option<u64> {
                self.socket.max_bandwidth()
            }

            /// UDT_LINGER: how long a later close lets unsent data drain (default 180 s;
            /// `None`: discard it and close at once).
            pub fn set_linger(&self, linger: Option<Duration>) {
                self.socket.set_linger(linger);
            }

            /// The current UDT_LINGER.
            pub fn linger(&self) -> Option<Duration> {
                self.socket.linger()
            }

            /// UDT_STATE: where the connection is in its life.
            pub fn state(&self) -> udt_proto::State {
                self.socket.state()
            }

            /// UDT_EVENT: the readiness a [`crate::Poller`] would report right now.
            pub fn events(&self) -> crate::Ready {
                self.socket.events()
            }

            /// UDT_SNDDATA: packets in the send buffer, sent or not, not yet acknowledged.
            pub fn send_data_pkts(&self) -> u32 {
                self.socket.send_data_pkts()
            }

            /// UDT_RCVDATA: readable data, in packets.
            pub fn recv_data_pkts(&self) -> u32 {
                self.socket.recv_data_pkts()
            }

            /// UDT4 `perfmon`: totals, the counts and rates since the last call with `clear`
            /// (or since opening), and the instantaneous path state.
            pub fn perfmon(&self, clear: bool) -> crate::Perfmon {
                self.socket.perfmon(clear)
            }

            /// Cumulative counters (the totals of [`Self::perfmon`]).
            pub fn stats(&self) -> udt_proto::ConnectionStats {
                self.socket.stats()
            }

            /// Protect every packet from now on with `key`: for a key agreed over this
            /// connection (a key exchange in its first bytes). The socket must have been
            /// opened with `SocketOptions::set_protect_later`; both sides call this when their
            /// part of the exchange is done, and neither delivers more data until the other
            /// has proved the key.
            pub fn start_protection(&self, key: &udt_proto::SessionKey) -> std::io::Result<()> {
                self.socket.start_protection(key)
            }

            /// Whether the peer has proved the session key (a packet from it authenticated).
            /// Always false without a session key.
            pub fn is_peer_authenticated(&self) -> bool {
                self.socket.is_peer_authenticated()
            }

            /// Instantaneous path state: RTT, windows, sending period, rates.
            pub fn path_stats(&self) -> udt_proto::PathStats {
                self.socket.path_stats()
            }

            /// The local UDP address (shared by every connection on the same multiplexer).
            pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                Ok(self.socket.local_addr())
            }

            /// The peer's UDP address.
            pub fn peer_addr(&self) -> std::io::Result<std::net::SocketAddr> {
                Ok(self.socket.peer_addr())
            }

            /// What the kernel granted this socket's UDP port: buffer sizes (and whether
            /// they were capped) and the offloads in use.
            pub fn socket_info(&self) -> crate::SocketInfo {
                self.socket.multiplexer().mux().socket_info
            }

            /// What the peer announced beyond UDT4 (`None`: nothing, as from every 4.11
            /// peer, or not yet arrived). GSO trains go only to a peer announcing GSO.
            pub fn peer_capabilities(&self) -> Option<udt_proto::wire::Capabilities> {
                self.socket.peer_extensions()
            }

            /// UDT4 `setsockopt` on a connected socket: UDT_SNDSYN, UDT_RCVSYN, UDT_LINGER,
            /// UDT_SNDTIMEO, UDT_RCVTIMEO and UDT_MAXBW apply at once; options that shape
            /// the connection or its port give [`crate::OptionError::TooLate`]; read-only and
            /// unsupported ones [`crate::OptionError::NotSettable`] (all as `InvalidInput`).
            pub fn set_option(
                &self,
                opt: crate::UdtOpt,
                value: crate::OptValue,
            ) -> std::io::Result<()> {
                self.socket.set_option(opt, value)
            }

            /// UDT4 `getsockopt`: any option's current value, typed as UDT4 types it.
            pub fn option(&self, opt: crate::UdtOpt) -> std::io::Result<crate::OptValue> {
                self.socket.option(opt)
            }

            /// Stop this socket's multiplexer at once without telling any peer, as if the
            /// process died. For tests of a vanished peer.
            #[doc(hidden)]
            pub fn abort_multiplexer(&self) {
                self.socket.multiplexer().abort();
            }
        }

        impl crate::Source for $ty {
            fn poll_handle(&self) -> crate::poller::PollHandle {
                self.socket.poll_handle()
            }
        }
    };
}
