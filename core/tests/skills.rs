//! Agent Skills end to end: listed in the system prompt by name and description, loaded on
//! demand by the `skill` tool (offered only when there are skills), run as slash commands,
//! listed by `/help`, and read again when they change.

mod common;

use std::path::Path;

use common::{Setup, call, text, tool_results, updates_of};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A workspace with the `pdf` skill (and a file beside it) in `.hearth/skills`, and the
/// user's `notes` skill in the config dir.
fn workspace(setup: &Setup) -> String {
    let cwd = setup.dir.path().join("project");
    write(
        &cwd.join(".hearth/skills/pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill PDF forms\nargument-hint: <file>\n---\n\
         # PDF forms\n\nRun scripts/fill.py on the form.\n",
    );
    write(&cwd.join(".hearth/skills/pdf/scripts/fill.py"), "print()");
    write(
        &setup.dir.path().join("user-config/skills/notes/SKILL.md"),
        "---\ndescription: Keep meeting notes\n---\nWrite notes under notes/.",
    );
    cwd.to_string_lossy().into_owned()
}

fn system(setup: &Setup, n: usize) -> String {
    setup.model_messages(n)[0]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

fn tool_names(setup: &Setup, n: usize) -> Vec<String> {
    let requests = setup.mock.requests();
    let tools = requests[n].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn user_texts(setup: &Setup, n: usize) -> Vec<String> {
    setup
        .model_messages(n)
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

fn new_session(client: &mut AcpClient<InProcess>, cwd: &str) -> String {
    let result = client.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
    result["sessionId"].as_str().unwrap().to_string()
}

/// The last command list `session` was sent.
fn last_list(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    let lists = updates_of(client, session, "available_commands_update");
    let last = lists.last().expect("a command list");
    last["availableCommands"].as_array().unwrap().clone()
}

#[test]
fn skills_are_listed_by_description_and_their_body_loaded_on_demand() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "skill", json!({"name": "pdf"})),
        call("c2", "skill", json!({"name": "pdf", "file": "scripts/fill.py"})),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = setup.client();
    let session = new_session(&mut client, &cwd);
    client.prompt(&session, "Fill in form.pdf");

    let prompt = system(&setup, 0);
    assert!(
        prompt.contains("# Skills\n\nSkills hold instructions for particular kinds of task"),
        "{prompt}"
    );
    assert!(prompt.contains("\n- `notes`: Keep meeting notes\n- `pdf`: Fill PDF forms"));
    assert!(!prompt.contains("Run scripts/fill.py"), "the body waits");
    assert!(tool_names(&setup, 0).contains(&"skill".to_string()));

    let folder = Path::new(&cwd).join(".hearth/skills/pdf");
    let results = tool_results(&setup, 1);
    assert_eq!(
        results[0],
        format!(
            "<skill name=\"pdf\" folder=\"{}\">\n# PDF forms\n\nRun scripts/fill.py on the \
             form.\n</skill>\n\nFiles in the skill's folder (load one with `skill` and `file`):\n\
             - scripts/fill.py",
            folder.display()
        )
    );
    assert_eq!(tool_results(&setup, 2)[1], "print()");
    let calls: Vec<Value> = client
        .updates(&session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(calls[0]["title"], "Load skill `pdf`");
    assert_eq!(calls[0]["kind"], "read");
    assert_eq!(calls[1]["title"], "Load `scripts/fill.py` of skill `pdf`");
    assert!(
        !client
            .received
            .iter()
            .any(|f| f["method"] == "session/request_permission"),
        "loading a skill asks nothing"
    );
}

#[test]
fn without_skills_there_is_no_skill_tool_and_no_section() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let mut client = setup.client();
    let session = new_session(&mut client, &setup.cwd());
    client.prompt(&session, "hi");
    assert!(!system(&setup, 0).contains("# Skills"));
    let tools = tool_names(&setup, 0);
    assert!(tools.contains(&"todo".to_string()), "{tools:?}");
    assert!(!tools.contains(&"skill".to_string()), "{tools:?}");
}

#[test]
fn a_skill_runs_as_a_command_and_help_lists_it() {
    let setup = Setup::new(json!({"responses": [text(&["Filled."])]}));
    let cwd = workspace(&setup);
    let mut client = setup.client();
    let session = new_session(&mut client, &cwd);

    let help = client.prompt(&session, "/help");
    assert_eq!(help["result"]["stopReason"], "end_turn");
    let answer = agent_text(&client.updates(&session));
    assert!(
        answer.contains("- `/pdf <file>`: Skill: Fill PDF forms"),
        "{answer}"
    );
    assert!(answer.contains("- `/notes`: Skill: Keep meeting notes"));
    let list = last_list(&client, &session);
    let pdf = list.iter().find(|c| c["name"] == "pdf").unwrap();
    assert_eq!(pdf["description"], "Skill: Fill PDF forms");
    assert_eq!(pdf["input"]["hint"], "<file>");

    client.prompt(&session, "/pdf form.pdf");
    let texts = user_texts(&setup, 0);
    let folder = Path::new(&cwd).join(".hearth/skills/pdf");
    assert_eq!(
        texts,
        [format!(
            "The user runs the skill `pdf`:\n\n<skill name=\"pdf\" folder=\"{}\">\n# PDF forms\n\n\
             Run scripts/fill.py on the form.\n</skill>\n\nFiles in the skill's folder (load one \
             with `skill` and `file`):\n- scripts/fill.py\n\nWhat the user typed after the \
             command: form.pdf",
            folder.display()
        )],
        "the typed command itself is not for the model"
    );
}

#[test]
fn a_changed_skill_reaches_the_model_and_the_commands_not_the_system_prompt() {
    let setup = Setup::new(json!({"responses": [text(&["one"]), text(&["two"])]}));
    let cwd = workspace(&setup);
    let mut client = setup.client();
    let session = new_session(&mut client, &cwd);
    client.prompt(&session, "first");
    write(
        &Path::new(&cwd).join(".agents/skills/csv/SKILL.md"),
        "---\nname: csv\ndescription: Clean CSV files\n---\nUse the csv module.",
    );
    client.prompt(&session, "second");

    assert_eq!(
        system(&setup, 0),
        system(&setup, 1),
        "the cached prefix stays"
    );
    let texts = user_texts(&setup, 1);
    assert_eq!(texts[1], "second");
    assert_eq!(
        texts[2],
        "The skills changed since this session began. These are available now, in place of \
         the ones the system prompt lists:\n- `csv`: Clean CSV files\n- `notes`: Keep meeting \
         notes\n- `pdf`: Fill PDF forms",
        "after the prompt, as a changed instruction file is"
    );
    let list = last_list(&client, &session);
    let csv = list.iter().find(|c| c["name"] == "csv");
    assert_eq!(csv.unwrap()["description"], "Skill: Clean CSV files");
}
