//! The scale family, `scenarios/scale/`: the million-job configuration at its quick size (a hundredth of the jobs,
//! sites and users, at the same load) runs with its sanity checks met, and its large groups report only sums; the
//! setting compared with CloudSim Plus deals its jobs to the hosts in turn.

mod family;

#[test]
fn million_at_its_quick_size_reports_its_large_groups_summed() {
    assert_eq!(family::files("scale").len(), 2);
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

#[test]
fn round_robin_deals_the_jobs_to_the_hosts_in_turn() {
    let opts = gridmarket::scenario::LoadOptions { quick: true, ..Default::default() };
    let study =
        gridmarket::scenario::Study::load(std::path::Path::new("scenarios/scale/round-robin.toml"), &opts).unwrap();
    family::run_reading(&study, "scale-round-robin", |out| {
        let jobs = std::fs::read_to_string(out.join("p0/r0/jobs.csv")).unwrap();
        let mut lines = jobs.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (id, site, outcome) = (col("id"), col("site"), col("outcome"));
        let mut rows = 0;
        for line in lines {
            let f: Vec<&str> = line.split(',').collect();
            let n: u64 = f[id].parse().unwrap();
            // Job n (from 1) is the (n − 1)-th the gateway dispatches: host (n − 1) mod 500.
            assert_eq!(f[site], format!("host-{}", (n - 1) % 500), "{line}");
            assert_eq!(f[outcome], "completed", "{line}");
            rows += 1;
        }
        assert_eq!(rows, 1000);
    });
}
