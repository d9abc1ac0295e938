//! The seccomp filter with real children: the system calls it always refuses fail with EPERM
//! under it, where the same calls unconfined fail otherwise or succeed (so the test cannot pass
//! by accident): io_uring_setup, keyctl, and an x32 system call (bit 30 set). A plain child
//! still runs. x86_64 only (the system call numbers are x86_64's); skipped without Landlock
//! (nothing is confined then), unless `HEARTH_REQUIRE_SANDBOX=1`.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::process::Command;

/// Makes three calls with python's ctypes and prints, for each, "ok" or the errno: an x32
/// io_uring_setup (425 | bit 30), io_uring_setup(1, NULL), and keyctl(GET_KEYRING_ID,
/// SESSION_KEYRING) (250).
const PROBE: &str = "import ctypes\n\
    libc = ctypes.CDLL(None, use_errno=True)\n\
    def call(*args):\n\
    \x20   return 'ok' if libc.syscall(*args) >= 0 else str(ctypes.get_errno())\n\
    print(call(0x40000000 | 425, 1, 0), call(425, 1, 0), call(250, 0, -3, 0))\n";

fn probe(confined: bool) -> String {
    let workspace = own_dir();
    let mut command = Command::new("python3");
    command.args(["-c", PROBE]);
    if confined {
        let rules = hearth_linux_sandbox::Rules {
            writable: vec![workspace.clone()],
            network: true,
        };
        hearth_linux_sandbox::prepare(&rules)
            .expect("the sandbox builds")
            .expect("this kernel has Landlock")
            .install(&mut command);
    }
    let output = command.output().expect("python3 runs");
    let _ = std::fs::remove_dir_all(&workspace);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A directory of this test's own under the system temp dir.
fn own_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hearth-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn landlock_here() -> bool {
    if hearth_linux_sandbox::landlock_abi().is_some() {
        return true;
    }
    assert_ne!(
        std::env::var("HEARTH_REQUIRE_SANDBOX").as_deref(),
        Ok("1"),
        "HEARTH_REQUIRE_SANDBOX=1 but this kernel has no Landlock"
    );
    eprintln!("SKIPPED: this kernel has no Landlock, so nothing is confined");
    false
}

#[test]
fn x32_io_uring_and_keyctl_are_refused_with_eperm() {
    if !landlock_here() {
        return;
    }
    let eperm = libc::EPERM.to_string();
    let open = probe(false);
    let open: Vec<&str> = open.split(' ').collect();
    assert_eq!(open.len(), 3, "{open:?}");
    assert!(
        open.iter().all(|result| *result != eperm),
        "unconfined, none is EPERM (x32: ENOSYS or ok; io_uring: EFAULT; keyctl: ok): {open:?}"
    );
    let confined = probe(true);
    assert_eq!(confined, [eperm.as_str(); 3].join(" "), "confined");
}
