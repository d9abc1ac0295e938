//! What the child does between fork and exec: system calls on what the parent prepared,
//! nothing that allocates or locks. In order: the network namespace (network off; it must
//! come first, since Landlock then refuses the write of `uid_map`) and the proxy's listener
//! in it, no new privileges, the seccomp filter, Landlock (unless a wrapper confines the
//! filesystem).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::handoff;

/// A ruleset and a filter that go together.
pub struct Variant {
    /// `None`: no Landlock (a wrapper confines the filesystem).
    pub ruleset: Option<OwnedFd>,
    pub filter: Vec<libc::sock_filter>,
}

pub struct Steps {
    primary: Variant,
    /// With the network off: the rules for when no namespace could be made. `None`: the
    /// network is on, no namespace is tried.
    fallback: Option<Variant>,
    /// The proxy's port and the end of the socket pair its listener is sent over.
    proxy: Option<(u16, OwnedFd)>,
    /// `/proc/self/uid_map` and `gid_map` contents: the user's ids mapped to themselves.
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Steps {
    pub fn new(primary: Variant, fallback: Option<Variant>, proxy: Option<(u16, OwnedFd)>) -> Self {
        // SAFETY: getuid and getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Steps {
            primary,
            fallback,
            proxy,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    /// Runs in the forked child.
    pub fn apply(&self) -> io::Result<()> {
        let variant = match &self.fallback {
            Some(fallback) if !self.enter_network_namespace() => fallback,
            Some(_) => {
                if let Some((port, sender)) = &self.proxy {
                    handoff::listen_and_send(sender.as_raw_fd(), *port)?;
                }
                &self.primary
            }
            None => &self.primary,
        };
        // SAFETY (all below): plain system calls on the child's own state; the pointers are
        // to memory this struct owns, alive for the call.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let program = libc::sock_fprog {
                len: variant.filter.len() as libc::c_ushort,
                filter: variant.filter.as_ptr().cast_mut(),
            };
            let program: *const libc::sock_fprog = &program;
            if libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                program,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if let Some(ruleset) = &variant.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) != 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// A new user and network namespace, the user's ids mapped to themselves, loopback up;
    /// false when the kernel (or a policy such as AppArmor's) allows no namespace.
    fn enter_network_namespace(&self) -> bool {
        // SAFETY: unshare changes only this (single-threaded, forked) process.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
            return false;
        }
        // Without the maps the command would run as the overflow user; without loopback,
        // servers it starts for itself would be unreachable. Neither opens the network, so
        // a failure here still leaves the network off.
        write_file(c"/proc/self/setgroups", b"deny");
        write_file(c"/proc/self/uid_map", &self.uid_map);
        write_file(c"/proc/self/gid_map", &self.gid_map);
        loopback_up();
        true
    }
}

/// Writes `bytes` to `path` with open, write and close; whether it worked is for the caller
/// to find out from what follows.
fn write_file(path: &std::ffi::CStr, bytes: &[u8]) {
    // SAFETY: `path` is NUL-terminated and `bytes` outlives the write.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, bytes.as_ptr().cast(), bytes.len());
            libc::close(fd);
        }
    }
}

/// Sets `lo` up in the new network namespace (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP).
fn loopback_up() {
    // SAFETY: an `ifreq` is plain data (zeroed is valid); the ioctls read and write only it.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return;
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo") {
            *slot = *byte as libc::c_char;
        }
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut request) == 0 {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(fd, libc::SIOCSIFFLAGS, &request);
        }
        libc::close(fd);
    }
}
