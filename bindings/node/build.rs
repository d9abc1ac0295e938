fn main() {
    // napi-build links a windows-gnu addon against a `libnode.dll` and panics when it finds
    // none; no Node distribution ships one (node.exe exports N-API itself, and it is an MSVC
    // build). There the addon resolves N-API from the host process when it loads instead
    // (napi's `dyn-symbols`, enabled for that target in Cargo.toml), so it links against
    // nothing and napi-build's other work (WASI and Android set-ups) doesn't apply.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "windows" && env == "gnu" {
        return;
    }
    napi_build::setup();
}
