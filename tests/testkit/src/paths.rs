//! Absolute paths for tests that only need *some* absolute path (a session's cwd, a file that
//! does not exist), written once in Unix form and given in the form of the OS the test runs on;
//! and `file://` URIs of paths.

use std::path::Path;

/// `unix` (an absolute Unix path such as `/w/main`) as an absolute path of this OS: itself on
/// Unix, `C:\w\main` on Windows, where `/w/main` has no drive and so is not absolute. No
/// directory is created: callers rely on the path naming nothing.
pub fn absolute(unix: &str) -> String {
    assert!(
        unix.starts_with('/'),
        "`{unix}` is not a Unix absolute path"
    );
    if cfg!(windows) {
        format!("C:{}", unix.replace('/', "\\"))
    } else {
        unix.to_string()
    }
}

/// The `file://` URI of absolute `path`, percent-encoded (`file:///C:/a%20b` on Windows, where
/// `file://` + the path would not be a URI).
pub fn file_uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .unwrap_or_else(|()| panic!("{} is not absolute", path.display()))
        .to_string()
}
