//! An exact solver for the transportation problem behind the MGN (multi-grid-node, bag-of-tasks) relaxation.
//!
//! Without the assignment constraints (4.4)/(4.5) the model of thesis §4.1 ships the m_j tasks of every application
//! j to sites of capacity n_i at a cost per task: a transportation problem. With integer supplies and capacities its
//! LP optimum is integral, so the LP relaxation and the MGN integer program coincide.
//!
//! Method: successive shortest paths with node potentials (Ahuja, Magnanti & Orlin, *Network Flows*, 1993, §9.7).
//! Sources are processed one at a time; each augmentation follows a shortest residual path from the current source
//! to the super-sink, found by Dijkstra on reduced costs and stopped as soon as the super-sink is settled. Only the
//! settled nodes' potentials change, by `dist − dist(sink)`, which keeps every reduced cost non-negative (and the
//! potentials bounded) while a search costs only the part of the graph it explores.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How the last search reached a node.
#[derive(Clone, Copy)]
enum Via {
    /// The search's source, or not reached.
    Start,
    /// From source `.0` along its arc `.1` (a forward arc).
    Arc(usize, usize),
    /// From site `.0`, backwards along arc `.1` of the node reached (cancelling flow).
    Back(usize, usize),
    /// The super-sink, from site `.0`.
    Exit(usize),
}

/// Ships every source's `supply` to sinks of `capacity` over `arcs` at minimum total cost.
///
/// `arcs\[s\]` lists `(sink, cost per unit)` for source `s`; costs must be finite and non-negative (they are: prices,
/// runtimes and penalties). Returns the flow on each arc, aligned with `arcs`. A source that cannot ship all its
/// supply (no residual path left) ships what it can; with a dummy sink reachable from every source that never
/// happens.
pub(crate) fn transport(supply: &[u32], capacity: &[u64], arcs: &[Vec<(usize, f64)>]) -> Vec<Vec<u32>> {
    let n = supply.len();
    let sink = n + capacity.len();
    let mut flow: Vec<Vec<u32>> = arcs.iter().map(|list| vec![0; list.len()]).collect();
    // Arcs into each site that carry flow (candidates for cancellation), and whether an arc is in that list.
    let mut users: Vec<Vec<(usize, usize)>> = vec![Vec::new(); capacity.len()];
    let mut listed: Vec<Vec<bool>> = arcs.iter().map(|list| vec![false; list.len()]).collect();
    let mut used = vec![0u64; capacity.len()];
    let mut potential = vec![0.0f64; sink + 1];
    let mut dist = vec![f64::INFINITY; sink + 1];
    let mut settled = vec![false; sink + 1];
    let mut via = vec![Via::Start; sink + 1];
    let mut touched: Vec<usize> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();

    for source in 0..n {
        let mut left = supply[source];
        while left > 0 {
            for &v in &touched {
                dist[v] = f64::INFINITY;
                settled[v] = false;
                via[v] = Via::Start;
            }
            touched.clear();
            order.clear();
            heap.clear();
            dist[source] = 0.0;
            touched.push(source);
            // Distances are non-negative, so their bit patterns order like the numbers (ties: lower node).
            heap.push(Reverse((0, source)));
            while let Some(Reverse((_, u))) = heap.pop() {
                if settled[u] {
                    continue;
                }
                settled[u] = true;
                order.push(u);
                if u == sink {
                    break;
                }
                let du = dist[u];
                let mut relax = |v: usize, reduced: f64, how: Via| {
                    let d = du + reduced.max(0.0);
                    if d < dist[v] {
                        if dist[v] == f64::INFINITY {
                            touched.push(v);
                        }
                        dist[v] = d;
                        via[v] = how;
                        heap.push(Reverse((d.to_bits(), v)));
                    }
                };
                if u < n {
                    for (a, &(site, cost)) in arcs[u].iter().enumerate() {
                        let v = n + site;
                        relax(v, cost + potential[u] - potential[v], Via::Arc(u, a));
                    }
                } else {
                    let site = u - n;
                    if used[site] < capacity[site] {
                        relax(sink, potential[u] - potential[sink], Via::Exit(site));
                    }
                    users[site].retain(|&(k, a)| {
                        listed[k][a] = flow[k][a] > 0;
                        listed[k][a]
                    });
                    for &(k, a) in &users[site] {
                        relax(k, -arcs[k][a].1 + potential[u] - potential[k], Via::Back(site, a));
                    }
                }
            }
            let Via::Exit(last) = via[sink] else { break };
            let reach = dist[sink];
            for &v in &order {
                potential[v] += dist[v] - reach;
            }

            // Bottleneck: the source's supply, the last site's room, and the flow of every cancelled arc.
            let mut delta = u64::from(left).min(capacity[last] - used[last]);
            let mut node = n + last;
            while let Via::Arc(k, _) = via[node] {
                node = k;
                if let Via::Back(site, a) = via[node] {
                    delta = delta.min(u64::from(flow[node][a]));
                    node = n + site;
                }
            }
            // delta <= left, a u32.
            let delta = delta as u32;
            node = n + last;
            while let Via::Arc(k, a) = via[node] {
                flow[k][a] += delta;
                if !listed[k][a] {
                    listed[k][a] = true;
                    users[arcs[k][a].0].push((k, a));
                }
                node = k;
                if let Via::Back(site, b) = via[node] {
                    flow[node][b] -= delta;
                    node = n + site;
                }
            }
            used[last] += u64::from(delta);
            left -= delta;
        }
    }
    flow
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancels_flow_to_reach_the_optimum() {
        // Source 0 first takes the cheap sink 0; source 1 needs sink 0 far more, so its shortest path re-routes
        // source 0 to sink 1 (cancelling an arc).
        let arcs = vec![vec![(0, 1.0), (1, 2.0)], vec![(0, 1.0), (1, 10.0)]];
        let flow = transport(&[1, 1], &[1, 1], &arcs);
        assert_eq!(flow, vec![vec![0, 1], vec![1, 0]]);
    }

    #[test]
    fn ships_what_it_can_without_a_path() {
        let flow = transport(&[3, 2], &[2], &[vec![(0, 1.0)], vec![]]);
        assert_eq!(flow, vec![vec![2], vec![]]);
    }

    #[test]
    fn splits_supply_by_marginal_cost() {
        let arcs = vec![vec![(0, 1.0), (1, 4.0)], vec![(0, 2.0), (1, 3.0)]];
        let flow = transport(&[3, 3], &[3, 3], &arcs);
        let cost = |f: &Vec<Vec<u32>>| -> f64 {
            f.iter().zip(&arcs).flat_map(|(fs, a)| fs.iter().zip(a).map(|(&x, &(_, c))| f64::from(x) * c)).sum()
        };
        // Source 0 (difference 3) keeps sink 0; source 1 goes to sink 1: 3*1 + 3*3 = 12.
        assert_eq!(cost(&flow), 12.0);
        assert_eq!(flow, vec![vec![3, 0], vec![0, 3]]);
    }
}
