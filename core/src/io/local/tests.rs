use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::*;
use crate::io::testing::{group_is_gone, live_group_members, local};

fn spec(command: &str, cwd: &Path) -> CommandSpec {
    CommandSpec {
        command: command.to_owned(),
        cwd: cwd.to_owned(),
        timeout: Duration::from_secs(60),
        output_limit: 64 * 1024,
        sandbox: None,
    }
}

/// `run_command` on a task of its own, on the local backend.
fn spawned(
    spec: CommandSpec,
    output: UnboundedSender<String>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<Result<CommandResult, IoError>> {
    tokio::spawn(async move { local().run_command(spec, output, cancel).await })
}

/// Reads deltas until the first full line, which the test commands make the shell's pid
/// (`echo $$`) — the id of the command's process group.
async fn first_line_pgid(rx: &mut UnboundedReceiver<String>) -> i32 {
    let mut text = String::new();
    while !text.contains('\n') {
        text.push_str(&rx.recv().await.expect("the command printed its pid"));
    }
    text.lines().next().unwrap().trim().parse().expect("a pid")
}

#[tokio::test]
async fn reads_text_and_explains_failures() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "héllo\n").unwrap();
    assert_eq!(local().read_text(&file).await.unwrap(), "héllo\n");

    let missing = local()
        .read_text(&dir.path().join("nope"))
        .await
        .unwrap_err();
    assert!(missing.0.ends_with("nope does not exist"), "{missing}");
    let directory = local().read_text(dir.path()).await.unwrap_err();
    assert!(directory.0.ends_with("is a directory"), "{directory}");
    let device = local().read_text(Path::new("/dev/zero")).await.unwrap_err();
    assert!(device.0.ends_with("is not a regular file"), "{device}");

    std::fs::write(&file, b"ab\0cd").unwrap();
    let binary = local().read_text(&file).await.unwrap_err();
    assert!(binary.0.contains("binary file"), "{binary}");
    std::fs::write(&file, b"caf\xe9").unwrap();
    let latin1 = local().read_text(&file).await.unwrap_err();
    assert!(latin1.0.contains("not UTF-8"), "{latin1}");
}

#[tokio::test]
async fn writes_text_creating_parent_directories() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new/deeper/file.rs");
    local().write_text(&file, "fn main() {}\n").await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "fn main() {}\n");
    local().write_text(&file, "replaced").await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "replaced");
}

#[tokio::test]
async fn removes_a_file_and_a_missing_one_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("made.txt");
    std::fs::write(&file, "x").unwrap();
    local().remove_file(&file).await.unwrap();
    assert!(!file.exists());
    local().remove_file(&file).await.unwrap();
    let directory = local().remove_file(dir.path()).await.unwrap_err();
    assert!(
        directory.0.contains(&*dir.path().to_string_lossy()),
        "{directory}"
    );
}

#[tokio::test]
async fn runs_a_command_with_merged_output_and_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let result = local()
        .run_command(
            spec("echo out; echo err >&2; pwd; exit 3", dir.path()),
            tx,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(result.output, format!("out\nerr\n{}\n", cwd.display()));
    assert_eq!(result.exit_code, Some(3));
    assert_eq!(result.signal, None);
    assert!(!result.truncated && !result.timed_out);
    let mut streamed = String::new();
    while let Ok(delta) = rx.try_recv() {
        streamed.push_str(&delta);
    }
    assert_eq!(streamed, result.output);
}

#[tokio::test]
async fn streams_deltas_before_the_command_exits() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let running = spawned(
        spec("echo first; sleep 1000", dir.path()),
        tx,
        cancel.clone(),
    );
    assert_eq!(rx.recv().await.unwrap(), "first\n");
    assert!(!running.is_finished());
    cancel.cancel();
    let result = running.await.unwrap().unwrap();
    assert_eq!(result.output, "first\n");
    assert_eq!(result.signal.as_deref(), Some("SIGKILL"));
}

#[tokio::test]
async fn caps_the_kept_output_with_a_marker() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec("seq 1 100000", dir.path());
    spec.output_limit = 1000;
    let (tx, _rx) = unbounded_channel();
    let result = local()
        .run_command(spec, tx, CancellationToken::new())
        .await
        .unwrap();
    assert!(result.truncated);
    assert!(result.output.starts_with("1\n2\n3\n"), "{}", result.output);
    assert!(
        result.output.ends_with("99999\n100000\n"),
        "{}",
        result.output
    );
    assert!(result.output.contains("bytes of output omitted"));
    assert!(result.output.len() < 1100);
    assert_eq!(result.exit_code, Some(0));
}

#[tokio::test]
async fn huge_output_stays_bounded_and_drains() {
    let dir = tempfile::tempdir().unwrap();
    let limit = 64 * 1024;
    let (tx, mut rx) = unbounded_channel();
    let result = local()
        .run_command(
            spec("yes | head -c 200000000; echo done", dir.path()),
            tx,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(0));
    assert!(result.truncated);
    assert!(result.output.ends_with("y\ny\ndone\n"));
    assert!(result.output.len() < limit + 100);
    let mut streamed = 0;
    let mut deltas = Vec::new();
    while let Ok(delta) = rx.try_recv() {
        streamed += delta.len();
        deltas.push(delta);
    }
    assert!(streamed <= 4 * limit + 200, "streamed {streamed} bytes");
    assert!(deltas.last().unwrap().contains("live output stops here"));
}

#[tokio::test]
async fn timeout_kills_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec("echo $$; trap '' TERM; sleep 1000 & sleep 1000", dir.path());
    spec.timeout = Duration::from_millis(500);
    let (tx, mut rx) = unbounded_channel();
    let running = spawned(spec, tx, CancellationToken::new());
    let pgid = first_line_pgid(&mut rx).await;
    let result = running.await.unwrap().unwrap();
    assert!(result.timed_out);
    assert_eq!(result.exit_code, None);
    assert!(result.signal.is_some());
    assert!(
        group_is_gone(pgid).await,
        "left: {:?}",
        live_group_members(pgid)
    );
}

#[tokio::test]
async fn cancel_kills_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let cancel = CancellationToken::new();
    let running = spawned(
        spec("echo $$; sleep 1000 & sleep 1000", dir.path()),
        tx,
        cancel.clone(),
    );
    let pgid = first_line_pgid(&mut rx).await;
    // A tree, not a lone shell: the background sleep has started.
    while live_group_members(pgid).len() < 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cancel.cancel();
    let result = running.await.unwrap().unwrap();
    assert!(!result.timed_out);
    assert_eq!(result.signal.as_deref(), Some("SIGKILL"));
    assert!(
        group_is_gone(pgid).await,
        "left: {:?}",
        live_group_members(pgid)
    );
}

#[tokio::test]
async fn dropping_the_future_kills_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let running = spawned(
        spec("echo $$; sleep 1000 & sleep 1000", dir.path()),
        tx,
        CancellationToken::new(),
    );
    let pgid = first_line_pgid(&mut rx).await;
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    assert!(
        group_is_gone(pgid).await,
        "left: {:?}",
        live_group_members(pgid)
    );
}

#[tokio::test]
async fn background_jobs_do_not_outlive_a_finished_command() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let running = spawned(
        spec("echo $$; sleep 1000 &", dir.path()),
        tx,
        CancellationToken::new(),
    );
    let pgid = first_line_pgid(&mut rx).await;
    let result = running.await.unwrap().unwrap();
    assert_eq!(result.exit_code, Some(0));
    assert!(
        group_is_gone(pgid).await,
        "left: {:?}",
        live_group_members(pgid)
    );
}

#[tokio::test]
async fn a_missing_working_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, _rx) = unbounded_channel();
    let error = local()
        .run_command(
            spec("true", &dir.path().join("gone")),
            tx,
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(error.0.contains("does not exist"), "{error}");
}
