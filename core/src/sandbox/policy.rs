//! A command's resolved policy: what it may write and whether it may reach the network, from
//! the user's settings, the session's roots and its private temp dir. Hearth's own state (the
//! data dir with the store and its "always" rules, the config dir) is never writable: a root
//! that contains either is refused rather than granted, since the mechanism can only allow
//! whole trees, never carve a hole out of one.

use std::path::{Path, PathBuf};

use super::settings::{Bwrap, Mode, Network, Settings};

/// What the engine resolved once for every command: the user's settings and the directories
/// no command may write.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub settings: Settings,
    /// Hearth's own directories (data dir, config dir), as canonical paths.
    pub protected: Vec<PathBuf>,
}

/// The policy one command runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    pub network: Network,
    /// What the command may write besides the temp dir (canonical paths).
    pub writable: Vec<PathBuf>,
    /// The session's roots (canonical), writable or not: what a layer that hides whole trees
    /// (bwrap's private `/tmp`) must keep in view.
    pub roots: Vec<PathBuf>,
    /// The session's private temp dir: `TMPDIR`, `TMP` and `TEMP` point to it.
    pub temp_dir: PathBuf,
    /// Whether running unconfined (no sandbox on this machine) is an error.
    pub required: bool,
    /// Whether the bwrap layer is used where it is installed.
    pub bwrap: Bwrap,
    /// Hearth's own directories (`Setup::protected`): a mechanism that can deny inside what
    /// it allows (Seatbelt) denies them explicitly.
    pub protected: Vec<PathBuf>,
}

impl Setup {
    /// This setup with its extra writable roots (`writableRoots`) where they really lead
    /// (`canonical`), as a command's policy compares them: a root reached through a symlink
    /// (which a command may re-point between two runs) is checked against Hearth's state
    /// where it leads, as Landlock and bwrap, which follow it, would grant it.
    pub fn resolved(&self, canonical: impl Fn(&Path) -> PathBuf) -> Setup {
        let mut setup = self.clone();
        for root in &mut setup.settings.writable_roots {
            *root = canonical(root);
        }
        setup
    }
}

impl Policy {
    /// The policy for a command of a session with `roots` (cwd and additional directories)
    /// and `temp_dir`, all canonical (and the setup's writable roots: [`Setup::resolved`]); an
    /// error naming the root that holds Hearth's state.
    pub fn new(setup: &Setup, roots: &[PathBuf], temp_dir: PathBuf) -> Result<Policy, String> {
        let settings = &setup.settings;
        let mut writable: Vec<PathBuf> = match settings.mode {
            Mode::WorkspaceWrite => roots.to_vec(),
            Mode::ReadOnly | Mode::Off => Vec::new(),
        };
        if settings.mode == Mode::WorkspaceWrite {
            writable.extend(settings.writable_roots.iter().cloned());
        }
        if settings.mode != Mode::Off {
            for root in &writable {
                // A root inside Hearth's directories stays writable (seatbelt.rs's golden
                // `root-inside-data-dir`): the state itself is not in it.
                if let Some(own) = setup.protected.iter().find(|own| own.starts_with(root)) {
                    return Err(format!(
                        "the sandbox cannot make {} writable: it contains Hearth's own state \
                         ({}), which no command may write. Move the workspace or point \
                         Hearth's dataDir/configDir elsewhere",
                        root.display(),
                        own.display()
                    ));
                }
            }
        }
        Ok(Policy {
            mode: settings.mode,
            network: settings.network.clone(),
            writable,
            roots: roots.to_vec(),
            temp_dir,
            required: settings.required,
            bwrap: settings.bwrap,
            protected: setup.protected.clone(),
        })
    }

    /// Whether the command runs confined at all.
    pub fn confines(&self) -> bool {
        self.mode != Mode::Off
    }

    /// Whether the command may open connections beyond its own loopback: only `network:
    /// true` (an allowlist goes through the proxy, never directly).
    pub fn network_allowed(&self) -> bool {
        !self.confines() || self.network == Network::On
    }

    /// The hosts the command may reach through Hearth's proxy; `None` without an allowlist.
    pub fn allowlist(&self) -> Option<&[String]> {
        match &self.network {
            Network::Allow(hosts) if self.confines() => Some(hosts),
            _ => None,
        }
    }

    /// Whether writing `path` (absolute) is allowed.
    pub fn may_write(&self, path: &Path) -> bool {
        !self.confines()
            || path.starts_with(&self.temp_dir)
            || self.writable.iter().any(|root| path.starts_with(root))
            || DEVICES.iter().any(|device| path.starts_with(device))
    }

    /// "workspace-write, network off".
    pub fn describe(&self) -> String {
        if !self.confines() {
            return "off".into();
        }
        format!("{}, {}", self.mode.as_str(), self.network)
    }

    /// The variables that point the command's temp files to the private temp dir.
    pub fn temp_env(&self) -> [(&'static str, &Path); 3] {
        let dir = self.temp_dir.as_path();
        [("TMPDIR", dir), ("TMP", dir), ("TEMP", dir)]
    }
}

/// Devices a confined command may still write (output thrown away, a terminal).
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(mode: Mode, protected: &[&str]) -> Setup {
        Setup {
            settings: Settings {
                mode,
                writable_roots: vec!["/extra".into()],
                ..Settings::default()
            },
            protected: protected.iter().map(PathBuf::from).collect(),
        }
    }

    fn roots() -> Vec<PathBuf> {
        vec!["/w/app".into(), "/w/lib".into()]
    }

    #[test]
    fn workspace_write_grants_the_roots_the_extra_roots_and_the_temp_dir() {
        let policy =
            Policy::new(&setup(Mode::WorkspaceWrite, &[]), &roots(), "/t/s1".into()).unwrap();
        for path in [
            "/w/app/a.rs",
            "/w/lib/x/y",
            "/extra/cache",
            "/t/s1/f",
            "/dev/null",
        ] {
            assert!(policy.may_write(Path::new(path)), "{path}");
        }
        for path in ["/etc/passwd", "/w/other", "/t/s2/f", "/w/application"] {
            assert!(!policy.may_write(Path::new(path)), "{path}");
        }
        assert_eq!(policy.describe(), "workspace-write, network off");
        assert!(!policy.network_allowed());
    }

    #[test]
    fn read_only_grants_only_the_temp_dir() {
        let policy = Policy::new(&setup(Mode::ReadOnly, &[]), &roots(), "/t/s1".into()).unwrap();
        assert!(policy.writable.is_empty());
        assert!(!policy.may_write(Path::new("/w/app/a.rs")));
        assert!(policy.may_write(Path::new("/t/s1/a")));
    }

    #[test]
    fn off_confines_nothing() {
        let policy = Policy::new(
            &setup(Mode::Off, &["/w/app/.hearth"]),
            &roots(),
            "/t".into(),
        )
        .unwrap();
        assert!(!policy.confines());
        assert!(policy.network_allowed());
        assert!(policy.may_write(Path::new("/etc/passwd")));
    }

    #[test]
    fn a_root_holding_hearths_state_is_refused() {
        let error = Policy::new(
            &setup(Mode::WorkspaceWrite, &["/home/u/.local/share/hearth"]),
            &["/home/u".into()],
            "/t".into(),
        )
        .unwrap_err();
        assert!(error.contains("cannot make /home/u writable"), "{error}");
        assert!(error.contains("/home/u/.local/share/hearth"), "{error}");
        // A sibling of the state is fine.
        let fine = Policy::new(
            &setup(Mode::WorkspaceWrite, &["/home/u/.local/share/hearth"]),
            &["/home/u/src".into()],
            "/t".into(),
        );
        assert!(fine.is_ok());
    }

    #[test]
    fn a_resolved_setup_has_its_writable_roots_where_they_lead() {
        let mut linked = setup(Mode::WorkspaceWrite, &["/real/data"]);
        linked.settings.writable_roots = vec!["/alias".into()];
        assert!(Policy::new(&linked, &roots(), "/t".into()).is_ok());
        let resolved = linked.resolved(|root| {
            if root == Path::new("/alias") {
                PathBuf::from("/real")
            } else {
                root.to_owned()
            }
        });
        assert_eq!(resolved.settings.writable_roots, [PathBuf::from("/real")]);
        let error = Policy::new(&resolved, &roots(), "/t".into()).unwrap_err();
        assert!(error.contains("cannot make /real writable"), "{error}");
    }

    #[test]
    fn the_network_is_on_only_when_switched_on() {
        let mut on = setup(Mode::WorkspaceWrite, &[]);
        on.settings.network = Network::On;
        assert!(
            Policy::new(&on, &roots(), "/t".into())
                .unwrap()
                .network_allowed()
        );
        let mut listed = setup(Mode::WorkspaceWrite, &[]);
        listed.settings.network = Network::Allow(vec!["example.com".into()]);
        let policy = Policy::new(&listed, &roots(), "/t".into()).unwrap();
        assert!(!policy.network_allowed(), "no direct network");
        assert_eq!(policy.allowlist(), Some(&["example.com".to_owned()][..]));
        assert!(policy.describe().ends_with("network only to example.com"));
        listed.settings.mode = Mode::Off;
        let off = Policy::new(&listed, &roots(), "/t".into()).unwrap();
        assert_eq!(off.allowlist(), None, "no sandbox, no proxy");
    }
}
