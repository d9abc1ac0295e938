//! `skill`: loads an Agent Skill on demand. The system prompt lists each skill's name and
//! description (`session/project/skills.rs` finds them); the model calls `skill {name}` when a
//! task matches one and reads its `SKILL.md` body, with the files beside it named, then
//! `skill {name, file}` for one of those files.
//!
//! Why a tool of its own rather than `read`: a skill is found by name, not path; the user's
//! skills live in the config dir, outside the workspace, where `read` would ask permission at
//! every file; and like the project instructions a skill configures the agent, so it is read
//! from the local disk, never through the client's `fs/*`. The folder is the bound: a `file`
//! that leads outside it (by `..` or a link) is refused, so the tool reads nothing else
//! without asking.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;

use super::bounds::{cap, plural};
use super::{
    About, Access, CallReport, Context, Kind, Location, Output, Planned, Result, Tool, ToolContent,
    ToolError,
};

/// The most files beside a `SKILL.md` named to the model.
const MAX_LISTED_FILES: usize = 50;
/// How deep the folder is walked for them.
const MAX_DEPTH: usize = 3;

/// A skill a session can load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    pub name: String,
    /// What it is for, and when to use it (its front matter's, bounded).
    pub description: String,
    /// Its `SKILL.md`; the folder holding it is the skill's.
    pub file: PathBuf,
    /// What its slash command takes (`argument-hint`), if it says.
    pub hint: Option<String>,
}

impl SkillEntry {
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }
}

/// The skills a session has now — replaced when their files change — shared by the session
/// and the calls of its `skill` tool.
#[derive(Debug, Default)]
pub struct Shelf(Mutex<Arc<[SkillEntry]>>);

impl Shelf {
    pub fn new(skills: Vec<SkillEntry>) -> Self {
        Shelf(Mutex::new(skills.into()))
    }

    pub fn get(&self) -> Arc<[SkillEntry]> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set(&self, skills: Vec<SkillEntry>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = skills.into();
    }

    pub fn find(&self, name: &str) -> Option<SkillEntry> {
        self.get().iter().find(|s| s.name == name).cloned()
    }
}

pub struct Skill;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The skill's name, as the system prompt lists it.
    name: String,
    /// A file of the skill's folder, as the skill's result names it. Omit it to load the skill.
    file: Option<String>,
}

pub struct Plan {
    skill: SkillEntry,
    /// What to read: `SKILL.md`, or a file of its folder (resolved, inside it).
    path: PathBuf,
}

const DESCRIPTION: &str = "Load a skill: the instructions for a kind of task that the system \
    prompt lists under Skills. When a task matches a skill's description, load it first and \
    follow it. The result names the files in the skill's folder; load one with `file`, or run \
    its scripts with `run_command` from the folder the result gives.";

impl Tool for Skill {
    type Input = Input;
    type Plan = Plan;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Plan>> {
        let skill = ctx.skills.find(&input.name).ok_or_else(|| {
            let known: Vec<String> = ctx.skills.get().iter().map(|s| s.name.clone()).collect();
            ToolError(match known.is_empty() {
                true => format!("no skill named `{}`: this session has none", input.name),
                false => format!(
                    "no skill named `{}`; the skills: {}",
                    input.name,
                    known.join(", ")
                ),
            })
        })?;
        let (path, title) = match &input.file {
            None => (skill.file.clone(), format!("Load skill `{}`", skill.name)),
            Some(file) => (
                inside(skill.dir(), file)?,
                format!("Load `{file}` of skill `{}`", skill.name),
            ),
        };
        let location = Location {
            path: path.clone(),
            line: None,
        };
        Ok(Planned::new(
            title,
            vec![location],
            Access::None,
            Plan { skill, path },
        ))
    }

    async fn run(&self, plan: Plan, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        let max = ctx.limits.read_max_bytes;
        let for_model = if plan.path == plan.skill.file {
            load(&plan.skill, max)?
        } else {
            read_capped(&plan.path, max)?
        };
        Ok(Output {
            for_model,
            content: vec![ToolContent::Text(plan.skill.description.clone())],
            ..Output::default()
        })
    }

    fn about(&self) -> About {
        About::new("skill", Kind::Read, DESCRIPTION)
    }
}

/// `file` of the skill folder `dir`, refused when it leads outside it.
fn inside(dir: &Path, file: &str) -> Result<PathBuf> {
    let refuse = || {
        ToolError(format!(
            "`{file}` is not a file of the skill's folder {}",
            dir.display()
        ))
    };
    let root = dir.canonicalize().map_err(|_| refuse())?;
    let path = root.join(file).canonicalize().map_err(|_| refuse())?;
    (path.starts_with(&root) && path.is_file())
        .then_some(path)
        .ok_or_else(refuse)
}

/// What the model reads of a loaded skill, read now (its first `max` bytes): its body
/// (`SKILL.md` without the front matter), where it lives, and the files beside it. The slash
/// command of a skill gives the model the same.
pub fn load(skill: &SkillEntry, max: usize) -> Result<String> {
    let text = read_capped(&skill.file, max)?;
    Ok(instructions(skill, &text))
}

/// The text of `path`, decoded lossily, cut at `max` bytes with a line saying so.
fn read_capped(path: &Path, max: usize) -> Result<String> {
    let bytes = std::fs::read(path)
        .map_err(|e| ToolError(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    let (shown, cut) = cap(&text, max);
    let mut shown = shown.to_string();
    if cut {
        shown.push_str(&format!(
            "\n[cut at {max} bytes of {}: the rest is not shown]",
            text.len()
        ));
    }
    Ok(shown)
}

fn instructions(skill: &SkillEntry, text: &str) -> String {
    let body = crate::front_matter::Document::parse(text).body;
    let dir = skill.dir();
    let mut out = format!(
        "<skill name=\"{}\" folder=\"{}\">\n{body}\n</skill>",
        skill.name,
        dir.display()
    );
    let (files, total) = files_beside(dir);
    if !files.is_empty() {
        out.push_str("\n\nFiles in the skill's folder (load one with `skill` and `file`):");
        for file in &files {
            out.push_str(&format!("\n- {file}"));
        }
        if total > files.len() {
            let more = plural(total - files.len(), "more file");
            out.push_str(&format!("\n- … {more}"));
        }
    }
    out
}

/// The files of a skill's folder but its `SKILL.md`, relative to it and sorted, hidden ones
/// left out; at most [`MAX_LISTED_FILES`], with how many there are.
fn files_beside(dir: &Path) -> (Vec<String>, usize) {
    let mut found = Vec::new();
    let walk = walkdir(dir, MAX_DEPTH);
    for path in walk {
        let Ok(relative) = path.strip_prefix(dir) else {
            continue;
        };
        if relative != Path::new("SKILL.md") {
            found.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    found.sort();
    let total = found.len();
    found.truncate(MAX_LISTED_FILES);
    (found, total)
}

/// The files under `dir`, `depth` levels down at most, not following links, hidden entries
/// skipped.
fn walkdir(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if hidden {
            continue;
        }
        if kind.is_file() {
            files.push(entry.path());
        } else if kind.is_dir() && depth > 1 {
            files.extend(walkdir(&entry.path(), depth - 1));
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::testing::{call, prepare, tree, workspace};

    fn shelf_of(root: &Path) -> Arc<Shelf> {
        Arc::new(Shelf::new(vec![SkillEntry {
            name: "pdf".into(),
            description: "Work with PDF files".into(),
            file: root.join("pdf/SKILL.md"),
            hint: None,
        }]))
    }

    #[tokio::test]
    async fn loads_the_body_and_names_the_files_beside_it() {
        let skills = tree(&[
            (
                "pdf/SKILL.md",
                b"---\nname: pdf\ndescription: Work with PDF files\n---\nUse pdftotext.\n",
            ),
            ("pdf/scripts/extract.sh", b"pdftotext \"$1\""),
            ("pdf/reference.md", b"# Reference"),
            ("pdf/.cache", b"hidden"),
        ]);
        let (_dir, mut ctx) = workspace();
        ctx.skills = shelf_of(skills.path());
        let planned = prepare(&Skill, json!({ "name": "pdf" }), &ctx)
            .await
            .unwrap();
        assert_eq!(planned.title, "Load skill `pdf`");
        let out = call(&Skill, json!({ "name": "pdf" }), &ctx).await.unwrap();
        let folder = skills.path().join("pdf");
        assert_eq!(
            out.for_model,
            format!(
                "<skill name=\"pdf\" folder=\"{}\">\nUse pdftotext.\n</skill>\n\n\
                 Files in the skill's folder (load one with `skill` and `file`):\n\
                 - reference.md\n- scripts/extract.sh",
                folder.display()
            )
        );
        let file = json!({ "name": "pdf", "file": "reference.md" });
        let out = call(&Skill, file, &ctx).await.unwrap();
        assert_eq!(out.for_model, "# Reference");
    }

    #[tokio::test]
    async fn refuses_an_unknown_skill_and_a_file_outside_its_folder() {
        let skills = tree(&[
            ("pdf/SKILL.md", b"---\nname: pdf\ndescription: d\n---\nx"),
            ("secret.txt", b"not the skill's"),
        ]);
        let (_dir, mut ctx) = workspace();
        let none = prepare(&Skill, json!({ "name": "pdf" }), &ctx).await;
        assert_eq!(
            none.err().unwrap().0,
            "no skill named `pdf`: this session has none"
        );
        ctx.skills = shelf_of(skills.path());
        let unknown = prepare(&Skill, json!({ "name": "docx" }), &ctx).await;
        assert_eq!(
            unknown.err().unwrap().0,
            "no skill named `docx`; the skills: pdf"
        );
        let escape = prepare(
            &Skill,
            json!({ "name": "pdf", "file": "../secret.txt" }),
            &ctx,
        )
        .await;
        assert!(
            escape
                .err()
                .unwrap()
                .0
                .starts_with("`../secret.txt` is not a file of the skill's folder"),
        );
    }
}
