//! Where `hearth auth` keeps a user's API key: the OS credential store (Keychain, Windows
//! Credential Manager, Secret Service), else — no store reachable, e.g. no D-Bus session as
//! in CI — `credentials.json` in the config dir, readable by its owner only. `SignIn` is how
//! the engine reads it (its `TerminalSignIn` port): when a turn first needs a provider (not
//! at start: the first answer never waits on the credential store), and again at each
//! `authenticate`, so a key stored while the agent runs is used without a
//! restart.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use hearth_core::{Config, HostPorts, ProviderName, Secret, TerminalSignIn};

/// The credential store's service name; the entry's user is the provider.
const SERVICE: &str = "hearth";
const FILE: &str = "credentials.json";

/// Where a key was kept.
pub enum Place {
    Keyring,
    File(PathBuf),
}

/// The user's keys; `dir` is the config dir (`None`: the platform has none).
pub struct Credentials {
    dir: Option<PathBuf>,
}

impl Credentials {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Credentials { dir }
    }

    /// The stored key of `provider`: the OS store's, else the file's.
    pub fn load(&self, provider: ProviderName) -> Option<String> {
        entry(provider)
            .and_then(|e| e.get_password().ok())
            .or_else(|| self.read_file().ok()?.remove(provider.as_str()))
    }

    /// Stores `key`: in the OS store when one answers, else in the file.
    pub fn save(&self, provider: ProviderName, key: &str) -> Result<Place, String> {
        if entry(provider).is_some_and(|e| e.set_password(key).is_ok()) {
            return Ok(Place::Keyring);
        }
        let mut keys = self.read_file()?;
        keys.insert(provider.as_str().to_string(), key.to_string());
        self.write_file(&keys).map(Place::File)
    }

    /// Removes `provider`'s key from both places; whether there was one.
    pub fn delete(&self, provider: ProviderName) -> Result<bool, String> {
        let in_store = entry(provider).is_some_and(|e| e.delete_credential().is_ok());
        let mut keys = self.read_file()?;
        let in_file = keys.remove(provider.as_str()).is_some();
        if in_file {
            self.write_file(&keys)?;
        }
        Ok(in_store || in_file)
    }

    fn path(&self) -> Result<PathBuf, String> {
        self.dir
            .as_ref()
            .map(|d| d.join(FILE))
            .ok_or_else(|| "this platform has no config dir; set configDir".to_string())
    }

    fn read_file(&self) -> Result<BTreeMap<String, String>, String> {
        let path = self.path()?;
        match fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("{} is not a credentials file: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// Writes a fresh owner-only file and renames it over the old one, so the key is never
    /// in a file anyone else can read, not even for a moment.
    fn write_file(&self, keys: &BTreeMap<String, String>) -> Result<PathBuf, String> {
        let path = self.path()?;
        let failed = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(failed)?;
        }
        let staged = path.with_extension("json.new");
        let _ = fs::remove_file(&staged);
        let mut file = owner_only(&staged).map_err(failed)?;
        let text = serde_json::to_string_pretty(keys).expect("a string map serializes");
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(failed)?;
        fs::rename(&staged, &path).map_err(failed)?;
        Ok(path)
    }
}

/// The OS store's entry for `provider`, or `None` when this platform has no store.
fn entry(provider: ProviderName) -> Option<keyring::Entry> {
    keyring::Entry::new(SERVICE, provider.as_str()).ok()
}

/// A new file only its owner can read: mode 0600 on Unix. On Windows the config dir is in
/// the user's profile, whose ACL already admits only the user (and administrators).
fn owner_only(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// The config dir `config` points at, where the file fallback lives.
pub fn for_config(config: &Config) -> Credentials {
    Credentials::new(config.user_config_dir())
}

/// The engine's way to the user's keys, and the program editors run to sign in.
pub struct SignIn {
    program: PathBuf,
    credentials: Credentials,
}

impl SignIn {
    /// Finds this very executable once, so no `initialize` asks the OS for it.
    pub fn for_config(config: &Config) -> Self {
        SignIn {
            // Not found (rare: a deleted binary): the name on PATH is the best guess left.
            program: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hearth")),
            credentials: for_config(config),
        }
    }
}

/// The engine's host ports of a `hearth` command: sign-in, nothing else.
pub fn ports(sign_in: SignIn) -> HostPorts {
    HostPorts {
        sign_in: Some(Arc::new(sign_in)),
        ..HostPorts::default()
    }
}

impl TerminalSignIn for SignIn {
    fn program(&self) -> &Path {
        &self.program
    }

    fn stored_key(&self, provider: ProviderName) -> Option<Secret> {
        self.credentials.load(provider).map(Secret::new)
    }
}
