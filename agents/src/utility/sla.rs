//! The utility manager's user table (Asaduzzaman & Maheswaran, Section 4.3): each user's SLA (V_0, ρ, τ, e_max),
//! offered load B and goodput V over a sliding window of τ seconds, and the SLA deviation max(0, ρ min(B, V_0) − V)
//! that both the penalty and the scheduling priority read. Loads are in dedicated nodes (work per second, work in
//! seconds on a dedicated node).

use std::collections::VecDeque;

/// The terms every user signs (V_0 is drawn per user).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlaTerms {
    /// Service ratio ρ in (0, 1].
    pub ratio: f64,
    /// Measurement window τ \[s\].
    pub window: f64,
    /// Largest elongation e_max for which a job earns revenue (and counts in the goodput).
    pub max_elongation: f64,
}

/// Work arriving at instants, summed over the last τ seconds.
#[derive(Clone, Debug, Default)]
struct Window {
    events: VecDeque<(f64, f64)>,
    sum: f64,
    total: f64,
}

impl Window {
    fn add(&mut self, t: f64, work: f64) {
        self.events.push_back((t, work));
        self.sum += work;
        self.total += work;
    }

    /// The work within (now − τ, now].
    fn within(&mut self, now: f64, window: f64) -> f64 {
        while let Some(&(t, w)) = self.events.front() {
            if t > now - window {
                break;
            }
            self.sum -= w;
            self.events.pop_front();
        }
        if self.events.is_empty() {
            self.sum = 0.0; // no drift from rounding once the window empties
        }
        self.sum
    }
}

/// One user's row.
#[derive(Clone, Debug)]
pub struct User {
    /// Its maximum workload V_0 [dedicated nodes].
    pub max_load: f64,
    offered: Window,
    goodput: Window,
}

impl User {
    /// A user whose SLA allows `max_load`.
    pub fn new(max_load: f64) -> User {
        User { max_load, offered: Window::default(), goodput: Window::default() }
    }

    /// A job of `work` arrived at `t`.
    pub fn offered(&mut self, t: f64, work: f64) {
        self.offered.add(t, work);
    }

    /// A job of `work` completed within e_max at `t`.
    pub fn delivered(&mut self, t: f64, work: f64) {
        self.goodput.add(t, work);
    }

    /// The SLA deviation at `now`, max(0, ρ min(B, V_0) − V), and the promised rate ρ min(B, V_0) it is out of.
    pub fn deviation(&mut self, now: f64, sla: &SlaTerms) -> (f64, f64) {
        let offered = self.offered.within(now, sla.window) / sla.window;
        let goodput = self.goodput.within(now, sla.window) / sla.window;
        let promised = sla.ratio * offered.min(self.max_load);
        ((promised - goodput).max(0.0), promised)
    }

    /// Over a whole run of `horizon` seconds: (min(V_0, B), V), the two sides of the service-differentiation scatter.
    pub fn over_run(&self, horizon: f64) -> (f64, f64) {
        (self.max_load.min(self.offered.total / horizon), self.goodput.total / horizon)
    }
}

/// Pearson's correlation of the pairs, `None` when either side is constant or there are fewer than two.
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len() as f64;
    if pairs.len() < 2 {
        return None;
    }
    let (mx, my) = pairs.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLA: SlaTerms = SlaTerms { ratio: 0.5, window: 100.0, max_elongation: 1.0 };

    #[test]
    fn deviation_over_a_sliding_window() {
        let mut u = User::new(3.0);
        // 500 s of work offered over the window: B = 5, capped at V_0 = 3, promised ρ × 3 = 1.5.
        u.offered(10.0, 200.0);
        u.offered(50.0, 300.0);
        assert_eq!(u.deviation(60.0, &SLA), (1.5, 1.5));
        u.delivered(60.0, 100.0); // V = 1
        assert_eq!(u.deviation(60.0, &SLA), (0.5, 1.5));
        // At 120 s the first job has left the window: B = 3, promised 1.5 still; at 200 s nothing is left.
        assert_eq!(u.deviation(120.0, &SLA), (0.5, 1.5));
        assert_eq!(u.deviation(200.0, &SLA), (0.0, 0.0));
        assert_eq!(u.over_run(1000.0), (0.5, 0.1));
    }

    #[test]
    fn pearson_of_hand_worked_pairs() {
        let r = pearson(&[(1.0, 2.0), (2.0, 4.0), (3.0, 6.5)]).unwrap();
        assert!(r > 0.99 && r <= 1.0);
        assert_eq!(pearson(&[(1.0, 1.0), (2.0, 0.0), (3.0, -1.0)]), Some(-1.0));
        assert_eq!(pearson(&[(1.0, 1.0), (1.0, 2.0)]), None);
        // x = (1, 2, 3, 4), y = (1, 3, 2, 4): sxy = 4, sxx = syy = 5, r = 0.8.
        assert!((pearson(&[(1.0, 1.0), (2.0, 3.0), (3.0, 2.0), (4.0, 4.0)]).unwrap() - 0.8).abs() < 1e-12);
    }
}
