//! The proxy listener's way from the child to the parent. A listening socket belongs to the
//! network namespace it was made in, whoever holds it later: so the child, inside its new
//! namespace, listens on `127.0.0.1:<port>` and sends the socket over a datagram socket pair
//! made before the fork (SCM_RIGHTS), then closes its own copy. The parent's proxy accepts on
//! it; the command can connect to it, and to nothing outside. Both ends are close-on-exec, so
//! the command inherits neither.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The parent's end: where the listener arrives.
pub struct Handoff(OwnedFd);

/// A control buffer for one descriptor, aligned for a `cmsghdr` (CMSG_SPACE of an int is
/// 24 bytes on 64-bit Linux, 16 on 32-bit).
#[repr(C, align(8))]
struct Control([u8; 32]);

/// The pair: the parent's end and the child's.
pub fn pair() -> io::Result<(Handoff, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair writes two descriptors into `fds`, which then belong to us alone.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((
            Handoff(OwnedFd::from_raw_fd(fds[0])),
            OwnedFd::from_raw_fd(fds[1]),
        ))
    }
}

impl Handoff {
    /// The listener the child sent, once it has started (its pre-exec steps are done by
    /// then); `None` when it sent none (it could make no namespace, and runs with the network
    /// off instead).
    pub fn receive(self) -> io::Result<Option<OwnedFd>> {
        let mut byte = 0u8;
        let mut iov = one_byte(&mut byte);
        let mut control = Control([0; 32]);
        let mut message = message(&mut iov, &mut control);
        // SAFETY: the message points at `byte` and `control`, alive for the call; a
        // descriptor the kernel put in the control data is new and ours.
        unsafe {
            let flags = libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC;
            if libc::recvmsg(self.0.as_raw_fd(), &mut message, flags) < 0 {
                let error = io::Error::last_os_error();
                return match error.kind() {
                    io::ErrorKind::WouldBlock => Ok(None),
                    _ => Err(error),
                };
            }
            let header = libc::CMSG_FIRSTHDR(&message);
            if header.is_null()
                || (*header).cmsg_level != libc::SOL_SOCKET
                || (*header).cmsg_type != libc::SCM_RIGHTS
            {
                return Ok(None);
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>());
            Ok(Some(OwnedFd::from_raw_fd(fd)))
        }
    }
}

/// In the forked child, inside its network namespace: listens on `127.0.0.1:port` and sends
/// the socket over `sender`. Only system calls on the stack's memory.
pub fn listen_and_send(sender: RawFd, port: u16) -> io::Result<()> {
    // SAFETY: plain system calls; every pointer is to a local alive for its call.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let result = bind_listen(fd, port).and_then(|()| send(sender, fd));
        libc::close(fd);
        result
    }
}

/// `bind` and `listen` on `127.0.0.1:port`. No SO_REUSEPORT: nothing else may bind the port.
unsafe fn bind_listen(fd: RawFd, port: u16) -> io::Result<()> {
    // SAFETY: a `sockaddr_in` is plain data; bind reads it for its length.
    unsafe {
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = port.to_be();
        address.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        let length = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(fd, (&raw const address).cast(), length) != 0
            || libc::listen(fd, libc::SOMAXCONN) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Sends `fd` over `sender` (one byte of data carries the SCM_RIGHTS message).
unsafe fn send(sender: RawFd, fd: RawFd) -> io::Result<()> {
    let mut byte = 0u8;
    let mut iov = one_byte(&mut byte);
    let mut control = Control([0; 32]);
    let mut message = message(&mut iov, &mut control);
    // SAFETY: the message points at locals alive for the call; the header written is inside
    // `control` (CMSG_SPACE of one int fits in it).
    unsafe {
        message.msg_controllen = libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) as _;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>(), fd);
        if libc::sendmsg(sender, &message, 0) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The one data byte a descriptor travels with.
fn one_byte(byte: &mut u8) -> libc::iovec {
    libc::iovec {
        iov_base: (byte as *mut u8).cast(),
        iov_len: 1,
    }
}

/// A message of `iov` with all of `control` as its control buffer; both must outlive it.
fn message(iov: &mut libc::iovec, control: &mut Control) -> libc::msghdr {
    // SAFETY: a `msghdr` is plain data, for which all zeroes is valid.
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = iov;
    message.msg_iovlen = 1;
    message.msg_control = control.0.as_mut_ptr().cast();
    message.msg_controllen = control.0.len() as _;
    message
}
