//! The seccomp programs, compiled in the parent. Always refused (EPERM): io_uring (its
//! operations bypass the socket rules), ptrace and `process_vm_*` (reading or steering another
//! process), `AF_VSOCK` sockets (on WSL2 they reach the Windows host outside any sandbox),
//! `bpf` (kernel programs; no build needs one) and the key-management calls `keyctl`,
//! `add_key`, `request_key` (the kernel keyrings are not namespaced: a confined command could
//! read the user's session keys). With `deny_inet` (network off and no namespace), every
//! socket family but `AF_UNIX` is refused too.
//!
//! On x86_64 every x32 system call (its number has bit 30 set, under the same audit arch as
//! x86_64) is refused before the rules: the rules match x86_64 numbers only, so an x32
//! `io_uring_setup` would pass them on a kernel with that ABI. i386 calls (`int 0x80`) have
//! another audit arch, and seccompiler's own check kills the process for them.
//!
//! Left allowed on purpose: `perf_event_open` (profiling one's own build; the kernel's
//! `perf_event_paranoid` bounds it to the caller's processes), `userfaultfd`, `unshare`
//! (Landlock already denies the `uid_map` write a new user namespace needs to be useful).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// System calls no confined command may make.
const ALWAYS_DENIED: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
];

/// The return value that refuses a system call with EPERM.
const REFUSE: u32 = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & libc::SECCOMP_RET_DATA);

/// The program, as the kernel takes it.
pub fn program(deny_inet: bool) -> Result<Vec<libc::sock_filter>, String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot build the seccomp filter: {e}");
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = ALWAYS_DENIED
        .iter()
        .map(|&number| (number, Vec::new()))
        .collect();
    let family = |op, family: libc::c_int| {
        let condition = SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, family as u64)?;
        SeccompRule::new(vec![condition])
    };
    let mut socket = vec![family(SeccompCmpOp::Eq, libc::AF_VSOCK).map_err(|e| failed(&e))?];
    if deny_inet {
        socket.push(family(SeccompCmpOp::Ne, libc::AF_UNIX).map_err(|e| failed(&e))?);
    }
    rules.insert(libc::SYS_socket, socket);
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| failed(&e))?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| failed(&e))?;
    let program = BpfProgram::try_from(filter).map_err(|e| failed(&e))?;
    let mut out = abi_guard();
    out.extend(program.into_iter().map(|op| libc::sock_filter {
        code: op.code,
        jt: op.jt,
        jf: op.jf,
        k: op.k,
    }));
    Ok(out)
}

/// What runs before seccompiler's program: on x86_64, refuse a call whose number has the x32
/// bit. It only jumps forward within itself, so the program after it is unchanged.
fn abi_guard() -> Vec<libc::sock_filter> {
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    // `struct seccomp_data` starts with `int nr`.
    const NR_OFFSET: u32 = 0;
    let op = |code: u32, jt: u8, jf: u8, k: u32| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    vec![
        op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, NR_OFFSET),
        // Bit set: fall through to the refusal; clear: skip it.
        op(
            libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
            0,
            1,
            X32_SYSCALL_BIT,
        ),
        op(libc::BPF_RET | libc::BPF_K, 0, 0, REFUSE),
    ]
}
