//! The salehi-ch5 family (Amini Salehi, Javadi & Buyya: preemption-aware admission control): every file loads with
//! targets and checks, and one sweep runs at its quick size with its sanity checks met.

mod family;

use gridmarket::scenario::{LoadOptions, Study};

fn family() -> Vec<std::path::PathBuf> {
    family::files("salehi-ch5")
}

#[test]
fn test_every_file_of_the_family_loads_with_targets_and_checks() {
    let files = family();
    assert_eq!(files.len(), 6, "{files:?}");
    for f in files {
        let study = Study::load(&f, &LoadOptions { quick: true, ..LoadOptions::default() }).unwrap();
        assert!(!study.checks.is_empty() && !study.targets.is_empty(), "{}", f.display());
    }
}

#[test]
fn test_the_external_duration_sweep_runs_with_its_checks_met() {
    family::run_quick("scenarios/salehi-ch5/external-duration.toml", None);
}

/// One reading of the paper's setup (it gives no time unit for the Weibull gaps nor a reference speed for the task
/// durations): the offered loads and the K of RACP and PACP it implies per cluster (C64, C128, C256) at the default
/// point of the sweeps (α_e = 1.7, α_l = 4, M_e = M_l = 90 s).
struct Reading {
    /// Seconds per unit of the Weibull scale of the gaps.
    gap_unit: f64,
    /// Each cluster's PE speed relative to the PE the durations are for.
    speeds: [f64; 3],
    /// Tasks per bag: Weibull (scale, shape).
    tasks: (f64, f64),
}

/// Per cluster: (ρ_l, ρ_e, RACP's K, PACP's K), ρ_e the external requests' undisturbed load Λ_j ω_j, K = 0 for
/// unbounded.
fn loads_and_k(r: &Reading, alpha_e: f64) -> Vec<(f64, f64, usize, usize)> {
    use gridmarket::analytic::admission::{
        Algorithm4, Capacity, PacpInputs, VarianceForm, completion_time, pacp_capacity, racp_capacity,
    };
    use gridmarket::workload::dist::Dist;
    // Tasks per bag: max(1, round(X)), X Weibull, as the workload draws them; E[N] and E[N²] from the CDF.
    let cdf = |x: f64| 1.0 - (-(x / r.tasks.0).powf(r.tasks.1)).exp();
    let p = |k: u32| if k == 1 { cdf(1.5) } else { cdf(f64::from(k) + 0.5) - cdf(f64::from(k) - 0.5) };
    let (n1, n2) = (1..80).fold((0.0, 0.0), |(a, b), k| (a + f64::from(k) * p(k), b + f64::from(k * k) * p(k)));
    // A bag's work is the sum of its N task durations N(M, 6.1), spread over the cluster's PEs (moldable).
    let gap_mean = |alpha: f64| Dist::Weibull { scale: alpha * r.gap_unit, shape: 7.86 }.mean();
    let clusters = [(64.0, 1.0), (128.0, 0.0), (256.0, -1.0)]; // PEs, the shift of α_l (+1 on C64), −shift of M_l
    clusters
        .iter()
        .zip(r.speeds)
        .map(|(&(pes, shift), speed)| {
            let m_l = 90.0 - shift;
            let (s_e, s_l) = (n1 * 90.0 / pes / speed, n1 * m_l / pes / speed);
            let cv_l = (n1 * 6.1f64.powi(2) + (n2 - n1 * n1) * m_l * m_l).sqrt() / (n1 * m_l);
            let (lambda, big_lambda) = (1.0 / gap_mean(4.0 + shift), 1.0 / (3.0 * gap_mean(alpha_e)));
            let k = |c: Capacity| match c {
                Capacity::Finite(k) => k,
                Capacity::Unbounded => 0,
            };
            let t = completion_time(s_e, lambda, 1.0 / s_l, cv_l, VarianceForm::Corrected).unwrap();
            let racp = k(racp_capacity(1.0 / t.mean, lambda).unwrap());
            let inputs = PacpInputs {
                external_rate: big_lambda,
                local_rate: lambda,
                local_service_rate: 1.0 / s_l,
                local_cv: cv_l,
                omega: s_e,
                threshold: 3.0 * s_e,
                variance: VarianceForm::Corrected,
            };
            let pacp = k(pacp_capacity(&inputs, Algorithm4::Intended, 10_000).unwrap());
            (lambda * s_l, big_lambda * s_e, racp, pacp)
        })
        .collect()
}

#[test]
fn test_the_readings_give_these_loads_and_ks() {
    let round = |v: Vec<(f64, f64, usize, usize)>| {
        v.into_iter().map(|(l, e, r, p)| ((l * 100.0).round() / 100.0, (e * 100.0).round() / 100.0, r, p)).collect()
    };
    let table = (1.76, 2.11);
    // The family's reading: gaps in seconds, durations for a 2,000-MIPS PE (C64's), so C128 runs at 1.5 and C256 at
    // 1.05. Only C64 is loaded (ρ_l + ρ_e = 0.96); there RACP's K is 1 (AACP's) and PACP's 2; C128 and C256 carry a
    // third of that, PACP admits all, RACP 3 and 4.
    let family = Reading { gap_unit: 1.0, speeds: [1.0, 1.5, 1.05], tasks: table };
    let got: Vec<(f64, f64, usize, usize)> = round(loads_and_k(&family, 1.7));
    assert_eq!(got, vec![(0.48, 0.48, 1, 2), (0.2, 0.16, 3, 0), (0.2, 0.11, 4, 0)]);
    // At α_e = 2.9 C64's PACP still has a finite K, so not every request is admitted there.
    assert_eq!(round(loads_and_k(&family, 2.9))[0], (0.48, 0.28, 1, 2));
    // The second reading (`providers.*.speed = 1`): the durations are what each cluster's PEs take, the MIPS ratings
    // unused. C128 is half again as loaded, its RACP K 2.
    let own = Reading { speeds: [1.0; 3], ..family };
    let got: Vec<(f64, f64, usize, usize)> = round(loads_and_k(&own, 1.7));
    assert_eq!(got, vec![(0.48, 0.48, 1, 2), (0.3, 0.24, 2, 0), (0.2, 0.12, 3, 0)]);
    // Durations for the fastest PE (3,000 MIPS): C64 is overloaded (1.44) at every α_e of the sweep, against "for
    // α_e > 2.0 all the external requests are accepted".
    let fastest = Reading { speeds: [2.0 / 3.0, 1.0, 0.7], ..family };
    assert_eq!(round(loads_and_k(&fastest, 2.9))[0], (0.72, 0.42, 1, 1));
    // Durations for a 1,000-MIPS PE: PACP's K is unbounded on every cluster, PACP = CACP, against "PACP has the
    // lowest violation rate" and its completed share below CACP's.
    let slow = Reading { speeds: [2.0, 3.0, 2.1], ..family };
    assert!(loads_and_k(&slow, 1.7).iter().all(|c| c.3 == 0));
    // Gaps in minutes: nothing is loaded (ρ_l + ρ_e < 0.02 everywhere) and every policy admits all.
    let minutes = Reading { gap_unit: 60.0, ..family };
    assert!(loads_and_k(&minutes, 1.7).iter().all(|c| c.0 + c.1 < 0.02 && c.3 == 0));
    // Tasks per bag with the scale 2.11 (mean 1.95 rather than 1.63): C64 is overloaded at α_e = 2.0 (1.06).
    let swapped = Reading { tasks: (2.11, 1.76), ..family };
    let c64 = loads_and_k(&swapped, 2.0)[0];
    assert!((c64.0 + c64.1 - 1.06).abs() < 0.01, "{c64:?}");
}
