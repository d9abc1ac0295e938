//! Words for counts, shared by the tools and the client stacks that report to them (a leaf:
//! it imports nothing of the crate).

/// "1 line", "2 lines".
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
