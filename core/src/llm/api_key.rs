//! A provider's API key while the engine runs: the host's (config or environment, fixed at
//! start) or else the one the user stored with `hearth auth`, which `authenticate` may replace
//! after the user signs in. Every request reads it afresh, so live sessions use a new key at
//! their next request. It stays a `Secret`: never printed, never written anywhere.

use std::sync::RwLock;

use crate::config::Secret;

pub struct ApiKey {
    host: Option<Secret>,
    stored: RwLock<Option<Secret>>,
}

impl ApiKey {
    pub fn new(host: Option<Secret>) -> Self {
        ApiKey {
            host,
            stored: RwLock::new(None),
        }
    }

    /// The key in effect: the host's, else the stored one.
    pub fn current(&self) -> Option<Secret> {
        self.host.clone().or_else(|| {
            let stored = self.stored.read().unwrap_or_else(|p| p.into_inner());
            stored.clone()
        })
    }

    /// Whether the host passed a key, which no stored key replaces.
    pub fn host_passed(&self) -> bool {
        self.host.is_some()
    }

    /// What the user's store holds now (`None`: signed out).
    pub fn set_stored(&self, key: Option<Secret>) {
        *self.stored.write().unwrap_or_else(|p| p.into_inner()) = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_key_wins_and_the_stored_one_can_change() {
        let stored = ApiKey::new(None);
        assert!(stored.current().is_none());
        stored.set_stored(Some(Secret::new("sk-user")));
        assert_eq!(stored.current().unwrap().expose(), "sk-user");
        stored.set_stored(None);
        assert!(stored.current().is_none());

        let host = ApiKey::new(Some(Secret::new("sk-host")));
        host.set_stored(Some(Secret::new("sk-user")));
        assert_eq!(host.current().unwrap().expose(), "sk-host");
        assert!(host.host_passed() && !stored.host_passed());
    }
}
