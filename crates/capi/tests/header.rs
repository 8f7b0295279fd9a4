//! `include/armctl.h` is what cbindgen makes of the crate today.

use std::path::PathBuf;

fn generated() -> String {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).unwrap();
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn the_checked_in_header_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../include/armctl.h");
    let header = generated();
    if std::env::var_os("ARMCTL_WRITE_HEADER").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &header).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == header,
        "include/armctl.h is stale: run ARMCTL_WRITE_HEADER=1 cargo test -p armctl_capi --test header"
    );
}
