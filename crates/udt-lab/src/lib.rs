//! `udt-lab`: an emulated wide-area link on one machine.
//!
//! Two (or more) network namespaces whose traffic crosses TUN devices into a forwarder that
//! applies `udt-netsim`'s link model in real time, per direction. Kernel TCP and UDP both cross
//! it, so UDT and TCP are compared on the same link. The experiment runner and its reports
//! (Markdown, JSON, plots) live here too; the `udt lab` command is a thin front.
