//! `Socket` and `Listener`: udt's blocking stream and listener as Python objects, shaped like
//! the standard library's `socket` objects.
//!
//! Each object holds its handle as `Mutex<Option<Arc<_>>>`: a call clones the `Arc` and
//! releases the lock before blocking (without the GIL), so `close` from one thread never waits
//! behind a `recv` in another; it takes the handle out and, if a call still holds it, shuts
//! the connection down so that call returns.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use udt::{SocketOptions, UdtListener, UdtStream};
use udt_capi::options::{set_congestion, set_named};
use udt_capi::UdtcStats;

/// Options from keyword arguments: the names of `udt_capi::options::OPTIONS` (integers) and
/// `cc` (a controller name).
fn socket_options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<SocketOptions> {
    let mut options = SocketOptions::default();
    for (key, value) in kwargs.into_iter().flat_map(|d| d.iter()) {
        let name: String = key.extract()?;
        let result = if name == "cc" {
            set_congestion(&mut options, &value.extract::<String>()?)
        } else {
            set_named(&mut options, &name, value.extract::<i64>()?)
        };
        result.map_err(PyValueError::new_err)?;
    }
    Ok(options)
}

fn closed() -> PyErr {
    // EBADF, as Python's own sockets report use after close.
    PyOSError::new_err((libc::EBADF, "socket is closed"))
}

fn address(addr: SocketAddr) -> (String, u16) {
    (addr.ip().to_string(), addr.port())
}

/// The bytes of a bytes-like object: `bytes` itself, or `bytes(data)` (a copy) for the
/// others (bytearray, memoryview...; the buffer protocol is not in the abi3-py39 API).
struct Data<'py>(Bound<'py, PyBytes>);

impl<'py> Data<'py> {
    fn extract(data: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = data.cast::<PyBytes>() {
            return Ok(Self(bytes.clone()));
        }
        let copied = data.py().get_type::<PyBytes>().call1((data,))?;
        Ok(Self(copied.cast_into::<PyBytes>()?))
    }

    fn as_slice(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// A connected UDT stream (from `connect` or `Listener.accept`).
#[pyclass(module = "udt._udt", frozen)]
pub(crate) struct Socket {
    stream: Mutex<Option<Arc<UdtStream>>>,
}

impl Socket {
    fn new(stream: UdtStream) -> Self {
        Self {
            stream: Mutex::new(Some(Arc::new(stream))),
        }
    }

    fn stream(&self) -> PyResult<Arc<UdtStream>> {
        let guard = self.stream.lock().unwrap_or_else(|p| p.into_inner());
        guard.clone().ok_or_else(closed)
    }
}

#[pymethods]
impl Socket {
    /// Queue some of `data`; returns how many bytes were queued.
    fn send(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
        let stream = self.stream()?;
        let data = Data::extract(data)?;
        let bytes = data.as_slice();
        Ok(py.detach(|| (&*stream).write(bytes))?)
    }

    /// Queue all of `data`.
    fn sendall(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let stream = self.stream()?;
        let data = Data::extract(data)?;
        let bytes = data.as_slice();
        Ok(py.detach(|| (&*stream).write_all(bytes))?)
    }

    /// Up to `bufsize` bytes; `b""` once the peer has closed.
    fn recv<'py>(&self, py: Python<'py>, bufsize: usize) -> PyResult<Bound<'py, PyBytes>> {
        let stream = self.stream()?;
        let mut buf = vec![0u8; bufsize];
        let n = py.detach(|| (&*stream).read(&mut buf))?;
        Ok(PyBytes::new(py, &buf[..n]))
    }

    /// Wait until the peer has acknowledged everything sent.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let stream = self.stream()?;
        Ok(py.detach(|| (&*stream).flush())?)
    }

    /// Close gracefully (unsent data drains up to the linger time); again is a no-op.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self.stream.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(stream) = taken else {
            return Ok(());
        };
        match Arc::try_unwrap(stream) {
            Ok(stream) => Ok(py.detach(|| stream.close())?),
            // Another thread is blocked in a call: wake it; the last holder closes.
            Err(shared) => Ok(shared.shutdown()?),
        }
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.stream
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    /// Timeout of blocking calls in seconds (`None`: block forever), as `socket.settimeout`.
    fn settimeout(&self, seconds: Option<f64>) -> PyResult<()> {
        let timeout = match seconds {
            None => None,
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be positive or None, not {s}"
                )))
            }
        };
        let stream = self.stream()?;
        stream.set_read_timeout(timeout)?;
        stream.set_write_timeout(timeout)?;
        Ok(())
    }

    /// The timeout set by `settimeout` (`None`: none).
    fn gettimeout(&self) -> PyResult<Option<f64>> {
        Ok(self.stream()?.read_timeout().map(|t| t.as_secs_f64()))
    }

    /// The peer's `(host, port)`.
    fn getpeername(&self) -> PyResult<(String, u16)> {
        Ok(address(self.stream()?.peer_addr()?))
    }

    /// The local `(host, port)`.
    fn getsockname(&self) -> PyResult<(String, u16)> {
        Ok(address(self.stream()?.local_addr()?))
    }

    /// The connection's counters and path state (UDT4 perfmon) as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = UdtcStats::from_perfmon(&self.stream()?.perfmon(false));
        stats_dict(py, &stats)
    }

    /// A file object over the socket, as `socket.makefile` (see `udt._io.makefile`).
    #[pyo3(signature = (mode="r", buffering=None, *, encoding=None, errors=None, newline=None))]
    fn makefile<'py>(
        slf: &Bound<'py, Self>,
        mode: &str,
        buffering: Option<i64>,
        encoding: Option<&str>,
        errors: Option<&str>,
        newline: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let helper = slf.py().import("udt._io")?.getattr("makefile")?;
        helper.call1((slf, mode, buffering, encoding, errors, newline))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        match self.stream() {
            Ok(s) => match (s.local_addr(), s.peer_addr()) {
                (Ok(l), Ok(p)) => format!("<udt.Socket {l} -> {p}>"),
                _ => "<udt.Socket>".to_string(),
            },
            Err(_) => "<udt.Socket closed>".to_string(),
        }
    }
}

/// The C API's stats struct as a dict, field for field.
fn stats_dict<'py>(py: Python<'py>, s: &UdtcStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let counters = [
        ("elapsed_ms", s.elapsed_ms),
        ("packets_sent", s.packets_sent),
        ("packets_received", s.packets_received),
        ("bytes_sent", s.bytes_sent),
        ("bytes_received", s.bytes_received),
        ("bytes_delivered", s.bytes_delivered),
        ("send_loss", s.send_loss),
        ("recv_loss", s.recv_loss),
        ("retransmitted", s.retransmitted),
        ("acks_sent", s.acks_sent),
        ("acks_received", s.acks_received),
        ("naks_sent", s.naks_sent),
        ("naks_received", s.naks_received),
        ("rtt_us", s.rtt_us),
        ("flow_window_pkts", u64::from(s.flow_window_pkts)),
        (
            "congestion_window_pkts",
            u64::from(s.congestion_window_pkts),
        ),
        ("flight_pkts", u64::from(s.flight_pkts)),
        ("mss", u64::from(s.mss)),
    ];
    for (name, value) in counters {
        d.set_item(name, value)?;
    }
    let rates = [
        ("send_period_us", s.send_period_us),
        ("send_rate_mbps", s.send_rate_mbps),
        ("recv_rate_mbps", s.recv_rate_mbps),
        ("bandwidth_mbps", s.bandwidth_mbps),
    ];
    for (name, value) in rates {
        d.set_item(name, value)?;
    }
    Ok(d)
}

/// A listening socket (from `listen`).
#[pyclass(module = "udt._udt", frozen)]
pub(crate) struct Listener {
    listener: Mutex<Option<Arc<UdtListener>>>,
}

impl Listener {
    fn listener(&self) -> PyResult<Arc<UdtListener>> {
        let guard = self.listener.lock().unwrap_or_else(|p| p.into_inner());
        guard.clone().ok_or_else(closed)
    }
}

#[pymethods]
impl Listener {
    /// Wait for a connection: `(Socket, (host, port))`.
    fn accept(&self, py: Python<'_>) -> PyResult<(Socket, (String, u16))> {
        let listener = self.listener()?;
        let (stream, peer) = py.detach(|| listener.accept())?;
        Ok((Socket::new(stream), address(peer)))
    }

    /// The local `(host, port)` (the port is the real one after listening on port 0).
    fn getsockname(&self) -> PyResult<(String, u16)> {
        Ok(address(self.listener()?.local_addr()?))
    }

    /// Stop listening; accepted sockets stay open. Again is a no-op.
    fn close(&self) {
        let taken = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(taken);
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) {
        self.close();
    }

    fn __repr__(&self) -> String {
        match self.listener().and_then(|l| Ok(l.local_addr()?)) {
            Ok(addr) => format!("<udt.Listener {addr}>"),
            Err(_) => "<udt.Listener closed>".to_string(),
        }
    }
}

/// Connect to a UDT listener at `host`:`port`; keyword arguments set options (see
/// `udt.OPTION_NAMES`, plus `cc="native"|"model"`).
#[pyfunction]
#[pyo3(signature = (host, port, **options))]
pub(crate) fn connect(
    py: Python<'_>,
    host: String,
    port: u16,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Socket> {
    let options = socket_options(options)?;
    let stream = py.detach(|| UdtStream::connect_with((host.as_str(), port), options))?;
    Ok(Socket::new(stream))
}

/// Listen on `host`:`port` (0: any free port); keyword arguments as for `connect`, applied
/// to accepted sockets.
#[pyfunction]
#[pyo3(signature = (host, port, **options))]
pub(crate) fn listen(
    py: Python<'_>,
    host: String,
    port: u16,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Listener> {
    let options = socket_options(options)?;
    let listener = py.detach(|| UdtListener::bind_with((host.as_str(), port), options))?;
    Ok(Listener {
        listener: Mutex::new(Some(Arc::new(listener))),
    })
}
