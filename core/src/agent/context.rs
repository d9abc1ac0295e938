//! The system prompt.

/// `unavailable`: the MCP servers that failed, with why — so the model knows their tools are
/// missing rather than inventing them.
pub fn system_prompt(
    cwd: &str,
    additional_dirs: &[String],
    unavailable: &[(String, String)],
) -> String {
    let mut text = format!(
        "You are Hearth, a coding agent working inside the user's editor.\nThe workspace root is {cwd}."
    );
    if !additional_dirs.is_empty() {
        text.push_str(&format!(
            "\nAdditional workspace directories: {}.",
            additional_dirs.join(", ")
        ));
    }
    if !unavailable.is_empty() {
        text.push_str("\nThese MCP servers are unavailable, so their tools are missing:");
        for (server, reason) in unavailable {
            text.push_str(&format!("\n- {server}: {reason}"));
        }
    }
    text
}
