//! A Job Object holding one child's whole process tree. Every process the child starts joins
//! the job (no breakaway is allowed), and the job kills them all when its last handle
//! closes — so whatever happens to the engine, even a crash, nothing it started survives.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    GetProcessId, OpenThread, ResumeThread, THREAD_SUSPEND_RESUME,
};

/// One process tree's job. Its handle closes on drop, killing what is left in it.
#[derive(Debug)]
pub struct Job(OwnedHandle);

impl Job {
    /// Puts the suspended process `process` (created with `console::creation_flags`) in a
    /// new job, then lets it run. Assigning before it runs closes the race where the child
    /// starts a grandchild before it is in the job (the grandchild would be outside).
    pub fn start(process: RawHandle) -> io::Result<Job> {
        let job = Job::new()?;
        // SAFETY: both handles are open (the caller owns the process handle).
        check(unsafe { AssignProcessToJobObject(job.raw(), process as HANDLE) })?;
        // SAFETY: the process handle is open; GetProcessId only reads it.
        resume_threads(unsafe { GetProcessId(process as HANDLE) })?;
        Ok(job)
    }

    /// A job that kills its processes when its last handle closes, and kills a process that
    /// crashes rather than leaving it waiting on an error-report dialog nobody will see.
    fn new() -> io::Result<Job> {
        // SAFETY: no security attributes, no name: an anonymous job.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle nobody else owns.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) });
        // SAFETY: a zeroed limit structure is valid (all limits off).
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags =
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        // SAFETY: the pointer and size describe `limits`, which outlives the call.
        check(unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of_u32::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>(),
            )
        })?;
        Ok(job)
    }

    /// Kills every process in the job; they exit with `exit_code`.
    pub fn terminate(&self, exit_code: u32) -> io::Result<()> {
        // SAFETY: the job handle is open.
        check(unsafe { TerminateJobObject(self.raw(), exit_code) })
    }

    /// How many processes of the job are still running.
    pub fn active_processes(&self) -> io::Result<u32> {
        // SAFETY: a zeroed accounting structure is valid.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the pointer and size describe `info`, which outlives the call.
        check(unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                size_of_u32::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>(),
                std::ptr::null_mut(),
            )
        })?;
        Ok(info.ActiveProcesses)
    }

    fn raw(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }
}

/// Resumes every thread of the suspended process `pid` (a new process has one). std keeps
/// no handle on a child's main thread, so its id is found in a snapshot of the threads.
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: plain values; the snapshot is a new handle, owned just below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh handle nobody else owns.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot as RawHandle) };
    // SAFETY: a zeroed entry is valid once its size is set.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of_u32::<THREADENTRY32>();
    let mut resumed = 0;
    // SAFETY: the snapshot is open and `entry` is a sized THREADENTRY32.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle() as HANDLE, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            resume_thread(entry.th32ThreadID)?;
            resumed += 1;
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle() as HANDLE, &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "process {pid} has no thread to resume"
        )));
    }
    Ok(())
}

fn resume_thread(tid: u32) -> io::Result<()> {
    // SAFETY: plain values; the handle returned is owned just below.
    let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, tid) };
    if thread.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh handle nobody else owns.
    let thread = unsafe { OwnedHandle::from_raw_handle(thread as RawHandle) };
    // SAFETY: the thread handle is open with THREAD_SUSPEND_RESUME.
    if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } == u32::MAX {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A Win32 BOOL as a result.
fn check(ok: windows_sys::core::BOOL) -> io::Result<()> {
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn size_of_u32<T>() -> u32 {
    u32::try_from(std::mem::size_of::<T>()).expect("a Win32 structure is small")
}
