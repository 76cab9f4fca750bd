//! The utility's Internet links as a flow model: transfers share the cluster's bottleneck (an uplink and a downlink
//! of fixed capacities) max-min fairly, each also capped by its public node's access link. Rates change only when a
//! transfer starts or ends, so the model advances every transfer by its rate between those instants; no packets.
//!
//! Each transfer crosses one shared link (its direction) and one access link of its own, so max-min fairness is
//! water-filling per direction: transfers capped below the fair share keep their cap and leave the rest to the others.
//! The shares are computed lazily, once time moves on or the next end is asked for, so that a burst of transfers
//! starting at one instant (an epoch's spawns) is shared once, not once per transfer.

use std::collections::BTreeMap;

/// Which of the cluster's links a transfer crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Direction {
    /// Cluster → public nodes (spawns, replenishment, migrations out).
    Up,
    /// Public nodes → cluster (migrations in).
    Down,
}

/// A transfer's number, unique over a run.
pub type TransferId = u64;

/// Bits left below which a transfer counts as done (a rounding margin, far below one byte).
const DONE_BITS: f64 = 1e-3;

#[derive(Clone, Debug)]
struct Transfer {
    direction: Direction,
    /// Bits still to send.
    left: f64,
    /// Its access link's capacity [bit/s].
    cap: f64,
    /// Its share of the link now [bit/s].
    rate: f64,
}

/// The bottleneck links and the transfers on them.
#[derive(Clone, Debug)]
pub struct Links {
    up: f64,
    down: f64,
    transfers: BTreeMap<TransferId, Transfer>,
    next: TransferId,
    /// The instant the transfers were last advanced to [s].
    at: f64,
    /// Bits carried so far, per direction.
    carried: [f64; 2],
    /// Directions whose transfers changed since their shares were computed.
    stale: [bool; 2],
}

impl Links {
    /// Links of `up` and `down` bits per second; `f64::INFINITY` for a link that is never the bottleneck.
    pub fn new(up: f64, down: f64) -> Links {
        Links { up, down, transfers: BTreeMap::new(), next: 0, at: 0.0, carried: [0.0; 2], stale: [false; 2] }
    }

    /// Starts sending `bytes` at `now` over `direction`, through an access link of `cap` bits per second.
    pub fn start(&mut self, now: f64, direction: Direction, bytes: f64, cap: f64) -> TransferId {
        self.advance(now);
        let id = self.next;
        self.next += 1;
        self.transfers.insert(id, Transfer { direction, left: bytes.max(0.0) * 8.0, cap, rate: 0.0 });
        self.stale[direction as usize] = true;
        id
    }

    /// Stops a transfer before it ends (its destination is gone).
    pub fn cancel(&mut self, now: f64, id: TransferId) {
        self.advance(now);
        if let Some(t) = self.transfers.remove(&id) {
            self.stale[t.direction as usize] = true;
        }
    }

    /// When the first transfer in progress will end at today's rates \[s\], if any.
    pub fn next_end(&mut self) -> Option<f64> {
        self.reshare();
        let ends = self.transfers.values().map(|t| if t.left <= DONE_BITS { 0.0 } else { t.left / t.rate });
        ends.min_by(f64::total_cmp).map(|dt| self.at + dt)
    }

    /// The transfers that have ended by `now`, removed, in the order they started.
    pub fn ended(&mut self, now: f64) -> Vec<TransferId> {
        self.advance(now);
        let done: Vec<TransferId> =
            self.transfers.iter().filter(|(_, t)| t.left <= DONE_BITS).map(|(&id, _)| id).collect();
        for id in &done {
            if let Some(t) = self.transfers.remove(id) {
                self.stale[t.direction as usize] = true;
            }
        }
        done
    }

    /// Transfers in progress.
    pub fn active(&self) -> usize {
        self.transfers.len()
    }

    /// Bits carried so far over `direction`.
    pub fn carried(&self, direction: Direction) -> f64 {
        self.carried[direction as usize]
    }

    /// A transfer's rate now [bit/s] (for tests and traces).
    pub fn rate(&mut self, id: TransferId) -> Option<f64> {
        self.reshare();
        self.transfers.get(&id).map(|t| t.rate)
    }

    fn advance(&mut self, now: f64) {
        let dt = now - self.at;
        if dt > 0.0 {
            self.reshare();
            for t in self.transfers.values_mut() {
                let sent = (t.rate * dt).min(t.left);
                t.left -= sent;
                self.carried[t.direction as usize] += sent;
            }
            self.at = now;
        }
    }

    fn reshare(&mut self) {
        for direction in [Direction::Up, Direction::Down] {
            if std::mem::take(&mut self.stale[direction as usize]) {
                self.share(direction);
            }
        }
    }

    /// Water-filling over the transfers of one direction.
    fn share(&mut self, direction: Direction) {
        let capacity = match direction {
            Direction::Up => self.up,
            Direction::Down => self.down,
        };
        let mut flows: Vec<(f64, TransferId)> =
            self.transfers.iter().filter(|(_, t)| t.direction == direction).map(|(&id, t)| (t.cap, id)).collect();
        flows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (mut left, mut n) = (capacity, flows.len() as f64);
        for (cap, id) in flows {
            let rate = cap.min(left / n);
            left -= rate;
            n -= 1.0;
            if let Some(t) = self.transfers.get_mut(&id) {
                t.rate = rate;
                // Everything sent at once: count it now, so that `next_end` reports the present.
                if rate.is_infinite() {
                    self.carried[direction as usize] += t.left;
                    t.left = 0.0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1e6;

    #[test]
    fn a_lone_transfer_runs_at_its_access_link() {
        let mut links = Links::new(100e6, 100e6);
        let t = links.start(0.0, Direction::Up, MB, 1e6);
        assert_eq!(links.rate(t), Some(1e6));
        assert_eq!(links.next_end(), Some(8.0));
        assert!(links.ended(7.9).is_empty());
        assert_eq!(links.ended(8.0), vec![t]);
        assert_eq!(links.active(), 0);
        assert!((links.carried(Direction::Up) - 8e6).abs() < 1e-6);
    }

    #[test]
    fn the_bottleneck_is_shared_max_min_fairly() {
        // A 10 Mb/s uplink: one transfer capped at 1 Mb/s, two at 100 Mb/s: 1, 4.5 and 4.5.
        let mut links = Links::new(10e6, 10e6);
        let slow = links.start(0.0, Direction::Up, MB, 1e6);
        let a = links.start(0.0, Direction::Up, MB, 100e6);
        let b = links.start(0.0, Direction::Up, 2.0 * MB, 100e6);
        assert_eq!(links.rate(slow), Some(1e6));
        assert_eq!(links.rate(a), Some(4.5e6));
        assert_eq!(links.rate(b), Some(4.5e6));
        // The downlink is a link of its own.
        let down = links.start(0.0, Direction::Down, MB, 100e6);
        assert_eq!(links.rate(down), Some(10e6));
        // `a` ends at 8/4.5 s; then `b` gets 9 Mb/s for what it has left.
        let end = links.next_end().unwrap();
        assert!((end - 0.8).abs() < 1e-9, "{end}"); // `down`: 8 Mb at 10 Mb/s
        assert_eq!(links.ended(end), vec![down]);
        let end = links.next_end().unwrap();
        assert!((end - 8.0 / 4.5).abs() < 1e-9);
        assert_eq!(links.ended(end), vec![a]);
        assert_eq!(links.rate(b), Some(9e6));
        let left = 16e6 - 8e6;
        assert!((links.next_end().unwrap() - (end + left / 9e6)).abs() < 1e-9);
    }

    #[test]
    fn infinite_links_carry_everything_at_once() {
        let mut links = Links::new(f64::INFINITY, f64::INFINITY);
        let t = links.start(5.0, Direction::Up, MB, f64::INFINITY);
        assert_eq!(links.next_end(), Some(5.0));
        assert_eq!(links.ended(5.0), vec![t]);
        assert_eq!(links.carried(Direction::Up), 8e6);
    }

    #[test]
    fn a_cancelled_transfer_frees_its_share() {
        let mut links = Links::new(2e6, 2e6);
        let a = links.start(0.0, Direction::Up, MB, 10e6);
        let b = links.start(0.0, Direction::Up, MB, 10e6);
        assert_eq!(links.rate(a), Some(1e6));
        links.cancel(1.0, b);
        assert_eq!(links.rate(a), Some(2e6));
        // 1 Mb sent in the first second, 7 Mb left at 2 Mb/s.
        assert!((links.next_end().unwrap() - 4.5).abs() < 1e-9);
    }
}
