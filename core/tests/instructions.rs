//! The system prompt the model gets: Hearth's guide and environment, the project's
//! instructions (`AGENTS.md`, `CLAUDE.md`, `GEMINI.md` and the user's own), their changes
//! during a session, and ACP `systemPrompt`.

mod common;

use std::path::{Path, PathBuf};

use common::{Setup, text};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

/// The system prompt of the agent's `n`th model request.
fn system(setup: &Setup, n: usize) -> String {
    let messages = setup.model_messages(n);
    assert_eq!(messages[0]["role"], "system");
    messages[0]["content"].as_str().unwrap().to_string()
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn dir_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `outer/repo/.git` (on branch `trunk`), with `outer/repo/sub` as the session's cwd.
fn nested_repo(setup: &Setup) -> (PathBuf, PathBuf, PathBuf) {
    let outer = setup.dir.path().join("outer");
    let repo = outer.join("repo");
    let sub = repo.join("sub");
    write(&repo.join(".git/HEAD"), "ref: refs/heads/trunk\n");
    std::fs::create_dir_all(&sub).unwrap();
    (outer, repo, sub)
}

fn session_in(client: &mut AcpClient<InProcess>, cwd: &Path) -> String {
    client.new_session(&dir_string(cwd))
}

#[test]
fn nested_agents_files_from_the_repository_root_to_the_cwd() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let (outer, repo, sub) = nested_repo(&setup);
    write(
        &outer.join("AGENTS.md"),
        "Above the repository: never shown.",
    );
    write(
        &repo.join("AGENTS.md"),
        "Run `make check` before you finish.\n",
    );
    write(&sub.join("AGENTS.md"), "In sub/, use tabs.\n");
    let mut client = setup.client();
    let session = session_in(&mut client, &sub);
    client.prompt(&session, "hi");

    let prompt = system(&setup, 0);
    assert!(prompt.starts_with("You are Hearth, a coding agent working inside the user's editor."));
    let expected = format!(
        "<instructions path=\"{}\">\nRun `make check` before you finish.\n</instructions>\n\n\
         <instructions path=\"{}\">\nIn sub/, use tabs.\n</instructions>",
        repo.join("AGENTS.md").display(),
        sub.join("AGENTS.md").display()
    );
    assert!(prompt.contains(&expected), "{prompt}");
    assert!(prompt.contains("the later, more specific one wins"));
    assert!(!prompt.contains("Above the repository"));
    assert!(prompt.contains(&format!(
        "- Workspace root and working directory: {}\n",
        sub.display()
    )));
    assert!(prompt.contains(&format!(
        "- Git: a repository at {}, on branch `trunk`",
        repo.display()
    )));
}

#[test]
fn a_claude_md_only_directory_and_the_users_own_file() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let project = setup.dir.path().join("project");
    write(&project.join("CLAUDE.md"), "Claude rules apply.");
    write(&project.join("GEMINI.md"), "Not this one.");
    let user = setup.dir.path().join("user-config").join("AGENTS.md");
    write(&user, "Always answer in English.");
    let mut client = setup.client();
    let session = session_in(&mut client, &project);
    client.prompt(&session, "hi");

    let prompt = system(&setup, 0);
    let expected = format!(
        "<instructions path=\"{}\">\nAlways answer in English.\n</instructions>\n\n\
         <instructions path=\"{}\">\nClaude rules apply.\n</instructions>",
        user.display(),
        project.join("CLAUDE.md").display()
    );
    assert!(prompt.contains(&expected), "{prompt}");
    assert!(!prompt.contains("Not this one."));
}

#[test]
fn without_instructions_the_prompt_still_has_the_environment() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let project = setup.dir.path().join("plain");
    let extra = setup.dir.path().join("extra");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    let mut client = setup.client();
    let result = client.call(
        "session/new",
        json!({"cwd": project, "additionalDirectories": [extra], "mcpServers": []}),
    );
    let session = result["sessionId"].as_str().unwrap().to_string();
    client.prompt(&session, "hi");

    let prompt = system(&setup, 0);
    assert!(!prompt.contains("# Project instructions"));
    let environment = prompt.split_once("# Environment\n\n").unwrap().1;
    let lines: Vec<&str> = environment.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "- Operating system: {} ({})",
            std::env::consts::OS,
            std::env::consts::ARCH
        )
    );
    assert_eq!(lines[1], "- Shell: `sh` (`run_command` runs `sh -c`)");
    let date = lines[2]
        .strip_prefix("- The session started on ")
        .and_then(|rest| rest.strip_suffix(" (UTC)."))
        .unwrap();
    assert!(
        date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
        "{date}"
    );
    assert_eq!(
        lines[3],
        format!(
            "- Workspace root and working directory: {}",
            project.display()
        )
    );
    assert_eq!(
        lines[4],
        format!("- Additional workspace directories: {}", extra.display())
    );
    assert!(lines[5].starts_with("- Git: the working directory is not in a git repository,"));
    // The guide comes first (that it names every built-in tool is checked in
    // `agent/system_prompt.rs`, against the registry).
    let guide = prompt.split_once("# Environment").unwrap().0;
    assert!(guide.contains("- `edit` — change part of a file by exact replacement"));
    assert!(guide.contains("do not make the same call again"));
}

#[test]
fn a_huge_file_is_cut_with_a_marker() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let project = setup.dir.path().join("project");
    let agents = project.join("AGENTS.md");
    // 40 000 bytes of "é" (two bytes each) after one ASCII byte: the 32 KiB cut falls inside
    // a char, which is kept out whole.
    write(&agents, format!("a{}", "é".repeat(20_000)));
    let mut client = setup.client();
    let session = session_in(&mut client, &project);
    client.prompt(&session, "hi");

    let prompt = system(&setup, 0);
    let shown = "é".repeat((32 * 1024 - 1) / 2);
    let marker = format!(
        "[Hearth: cut here; {} more bytes of {} are not shown. Read the file for the rest.]",
        40_001 - 1 - shown.len(),
        agents.display()
    );
    assert!(
        prompt.contains(&format!("a{shown}\n{marker}\n</instructions>")),
        "{}",
        &prompt[prompt.len() - 400..]
    );
}

#[test]
fn a_file_that_is_not_utf8_is_decoded_lossily_with_a_marker() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let project = setup.dir.path().join("project");
    let agents = project.join("AGENTS.md");
    write(&agents, b"Latin-1 caf\xe9 rules");
    let mut client = setup.client();
    let session = session_in(&mut client, &project);
    client.prompt(&session, "hi");

    let prompt = system(&setup, 0);
    let expected = format!(
        "Latin-1 caf\u{FFFD} rules\n[Hearth: {} is not valid UTF-8; the bytes that are not are shown as U+FFFD.]",
        agents.display()
    );
    assert!(prompt.contains(&expected), "{prompt}");
}

#[test]
fn a_changed_file_joins_the_conversation_and_the_system_prompt_stays() {
    let setup =
        Setup::new(json!({"responses": [text(&["one"]), text(&["two"]), text(&["three"])]}));
    let (_, repo, sub) = nested_repo(&setup);
    write(&repo.join("AGENTS.md"), "Old rule.");
    write(&sub.join("CLAUDE.md"), "Sub rule.");
    let mut client = setup.client();
    let session = session_in(&mut client, &sub);
    client.prompt(&session, "first");
    write(&repo.join("AGENTS.md"), "New rule: write tests.");
    std::fs::remove_file(sub.join("CLAUDE.md")).unwrap();
    client.prompt(&session, "second");
    client.prompt(&session, "third");

    assert_eq!(
        system(&setup, 1),
        system(&setup, 0),
        "the cached prefix survives"
    );
    assert!(system(&setup, 1).contains("Old rule."));
    let messages = setup.model_messages(1);
    let contents: Vec<&str> = messages[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(contents[..3], ["first", "one", "second"]);
    assert_eq!(messages[4]["role"], "user");
    assert_eq!(
        contents[3],
        format!(
            "The project instructions changed since this session began. This replaces what the \
             system prompt shows for these files; the other files still apply, and the innermost \
             file still wins.\n\n\
             <instructions path=\"{}\">\nNew rule: write tests.\n</instructions>\n\n\
             <instructions path=\"{}\">(this file was removed: its instructions no longer apply)</instructions>",
            repo.join("AGENTS.md").display(),
            sub.join("CLAUDE.md").display()
        )
    );
    // Told once: the third turn has no second notice.
    let third = setup.model_messages(2);
    let notices = third
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("The project instructions changed"))
        })
        .count();
    assert_eq!(notices, 1);
    assert_eq!(system(&setup, 2), system(&setup, 0));
}

fn system_prompt(mode: &str, content: Value) -> Value {
    json!({"mode": mode, "content": content})
}

fn text_blocks(texts: &[&str]) -> Value {
    Value::Array(
        texts
            .iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect(),
    )
}

#[test]
fn system_prompt_append_is_kept_across_a_restart_and_replaced_on_request() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"]), text(&["c"])]}));
    let cwd = setup.cwd();
    let mut client = setup.client();
    let result = client.call(
        "session/new",
        json!({"cwd": cwd, "mcpServers": [],
               "systemPrompt": system_prompt("append", text_blocks(&["Answer in French.", "Be brief."]))}),
    );
    let session = result["sessionId"].as_str().unwrap().to_string();
    client.prompt(&session, "hi");
    let first = system(&setup, 0);
    assert!(
        first.ends_with("\n\n# Instructions from the editor\n\nAnswer in French.\n\nBe brief.\n"),
        "{first}"
    );
    assert!(first.starts_with("You are Hearth"));

    // A fresh engine: the session is restored from the store; a load without a system
    // prompt keeps the stored one, and the whole prompt is what it was.
    drop(client);
    let mut fresh = setup.client();
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    fresh.prompt(&session, "again");
    assert_eq!(system(&setup, 1), first);

    fresh.call(
        "session/resume",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": [],
               "systemPrompt": system_prompt("append", text_blocks(&["Answer in German."]))}),
    );
    fresh.prompt(&session, "once more");
    let replaced = system(&setup, 2);
    assert!(replaced.ends_with("# Instructions from the editor\n\nAnswer in German.\n"));
    assert!(!replaced.contains("French"));
}

#[test]
fn initialize_advertises_system_prompt_in_append_mode() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    let result = client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    assert_eq!(
        result["agentCapabilities"]["sessionCapabilities"]["systemPrompt"],
        json!({})
    );
}

#[test]
fn a_system_prompt_hearth_cannot_apply_is_refused_and_creates_nothing() {
    let setup = Setup::new(json!({"responses": [text(&["a"])]}));
    let cwd = setup.cwd();
    let mut client = setup.client();
    let cases = [
        (
            system_prompt("override", text_blocks(&["x"])),
            "`systemPrompt.mode`: \"override\" is not supported; this agent supports only \"append\"",
        ),
        (
            system_prompt("_custom", text_blocks(&["x"])),
            "`systemPrompt.mode`: \"_custom\" is not supported; this agent supports only \"append\"",
        ),
        (
            system_prompt("append", json!([])),
            "`systemPrompt.content` must not be empty",
        ),
        (
            system_prompt(
                "append",
                json!([{"type": "text", "text": "x"}, {"type": "resource_link", "uri": "file:///a", "name": "a"}]),
            ),
            "`systemPrompt.content[1]`: only `text` blocks are supported",
        ),
    ];
    for (prompt, message) in &cases {
        let error = client.call_err(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [], "systemPrompt": prompt}),
        );
        assert_eq!(error["code"], -32602);
        assert_eq!(error["message"], format!("Invalid params: {message}"));
    }
    assert_eq!(
        client.call("session/list", json!({}))["sessions"],
        json!([])
    );

    // On load, the session is not brought up: nothing is replayed, and its stored system
    // prompt (none) stays.
    let session = client.new_session(&cwd);
    client.prompt(&session, "hi");
    let mut fresh = setup.client();
    let before = fresh.received.len();
    let error = fresh.call_err(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": [],
               "systemPrompt": system_prompt("override", text_blocks(&["x"]))}),
    );
    assert_eq!(error["code"], -32602);
    assert_eq!(
        fresh.received.len(),
        before + 1,
        "no update before the error"
    );
    let error = fresh.call_err(
        "session/resume",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": [],
               "systemPrompt": system_prompt("append", json!([]))}),
    );
    assert_eq!(error["code"], -32602);
}
