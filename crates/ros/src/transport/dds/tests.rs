use super::DdsOptions;

#[test]
fn loopback_only_with_jazzys_discovery_range_or_humbles_localhost_only() {
    let only = DdsOptions::localhost_only;
    assert!(only(None, Some("LOCALHOST")));
    assert!(only(None, Some("localhost")));
    assert!(only(Some("1"), None));
    assert!(only(Some("1"), Some("SUBNET")));
    assert!(only(Some("0"), Some("LOCALHOST")));
    assert!(!only(None, None));
    assert!(!only(Some("0"), None));
    assert!(!only(None, Some("SUBNET")));
    assert!(!only(None, Some("SYSTEM_DEFAULT")));
    assert!(!only(None, Some("")));
}

#[test]
fn fast_dds_transports_off_udpv4_are_refused_by_name() {
    for fine in [None, Some(""), Some("DEFAULT"), Some("udpv4")] {
        assert!(
            DdsOptions::check_fast_dds_transports(fine).is_ok(),
            "{fine:?}"
        );
    }
    for refused in ["LARGE_DATA", "SHM", "UDPv6"] {
        let reason = DdsOptions::check_fast_dds_transports(Some(refused))
            .unwrap_err()
            .to_string();
        assert!(
            reason.contains(refused) && reason.contains("UDPv4"),
            "{reason}"
        );
    }
}
