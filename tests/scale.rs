//! The scale family, `scenarios/scale/`: the million-job configuration at its quick size (a hundredth of the jobs,
//! sites and users, at the same load) runs with its sanity checks met, and its large groups report only sums.

mod family;

#[test]
fn million_at_its_quick_size_reports_its_large_groups_summed() {
    assert_eq!(family::files("scale").len(), 1);
    let result = family::run_quick("scenarios/scale/million.toml", None);
    let s = &result.summaries[0];
    assert!(s["jobs.completed"].mean > 9_900.0, "{}", s["jobs.completed"].mean);
    // Above `summed-above = 50`, the 100 users report summed; the 10 sites each their own.
    assert!(!s.keys().any(|k| k.starts_with("brokers.user-")), "a user's own metric");
    assert!(s.keys().any(|k| k.starts_with("providers.site-0.")), "no site of its own");
    // What the users paid, summed, is what the sites received: no money is lost in the sums.
    let paid = s["brokers.user.paid"].mean;
    let received: f64 = (0..10).map(|i| s[&format!("providers.site-{i}.received")].mean).sum();
    assert!(paid > 0.0 && (paid - received).abs() <= 1e-9 * paid, "paid {paid}, received {received}");
}
