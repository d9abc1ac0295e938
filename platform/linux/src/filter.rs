//! The seccomp programs, compiled in the parent. Always refused (EPERM): io_uring (its
//! operations bypass the socket rules), ptrace and `process_vm_*` (reading or steering another
//! process), and `AF_VSOCK` sockets (on WSL2 they reach the Windows host outside any
//! sandbox). With `deny_inet` (network off and no namespace), every socket family but
//! `AF_UNIX` is refused too. Known gap: x32 system calls (numbers with bit 30 set) are not
//! matched; kernels rarely enable that ABI.

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
];

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
    Ok(program
        .into_iter()
        .map(|op| libc::sock_filter {
            code: op.code,
            jt: op.jt,
            jf: op.jf,
            k: op.k,
        })
        .collect())
}
