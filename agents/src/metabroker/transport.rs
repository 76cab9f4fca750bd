//! An exact solver for the transportation problem behind the MGN (multi-grid-node, bag-of-tasks) relaxation.
//!
//! Without the assignment constraints (4.4)/(4.5), the model of thesis §4.1 ships the m_j tasks of every
//! application j to sites of capacity n_i at a cost per task: a transportation problem, here with an unbounded
//! overflow sink (the dummy provider) so that it is always feasible. With integer supplies and capacities its LP
//! optimum is integral, so the LP relaxation and the MGN integer program coincide.
//!
//! Method: the primal network simplex (Ahuja, Magnanti & Orlin, *Network Flows*, 1993, ch. 11) on the network
//! sources → sites → super-sink, sources → overflow → super-sink. Flows are integers, so they are exact; costs are
//! floats, and node potentials are recomputed along tree paths after each pivot, so rounding never accumulates.
//! Entering arcs are chosen by block search (Grigoriadis 1986, as in LEMON), the leaving arc keeps the spanning
//! tree strongly feasible (Cunningham 1976), which rules out cycling. The initial tree sends every source's supply
//! to the overflow sink, a feasible and strongly feasible start that needs no artificial arcs.

/// An arc's status in the simplex: in the spanning tree, or out of it at its lower or upper bound.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Tree,
    Lower,
    Upper,
}

/// The network and its spanning-tree basis.
struct Simplex {
    tail: Vec<usize>,
    head: Vec<usize>,
    cost: Vec<f64>,
    cap: Vec<u64>,
    flow: Vec<u64>,
    state: Vec<State>,
    /// Per node: its parent in the tree (the root is its own parent), the arc to it, and whether that arc points
    /// from the node to its parent.
    parent: Vec<usize>,
    pred: Vec<usize>,
    up: Vec<bool>,
    depth: Vec<usize>,
    potential: Vec<f64>,
    /// Tree arcs at each node.
    tree: Vec<Vec<usize>>,
}

impl Simplex {
    /// Appends an arc and returns its index.
    fn add(&mut self, tail: usize, head: usize, cost: f64, cap: u64, flow: u64, state: State) -> usize {
        self.tail.push(tail);
        self.head.push(head);
        self.cost.push(cost);
        self.cap.push(cap);
        self.flow.push(flow);
        self.state.push(state);
        self.cost.len() - 1
    }

    /// Reduced cost of arc `e`: zero on tree arcs.
    fn reduced(&self, e: usize) -> f64 {
        self.cost[e] + self.potential[self.tail[e]] - self.potential[self.head[e]]
    }

    /// Block search: the most violating arc of the first block (from `cursor`, cyclically) holding one, if any.
    fn entering(&self, cursor: usize, block: usize, tolerance: f64) -> Option<usize> {
        let arcs = self.cost.len();
        let mut best = None;
        let mut most = -tolerance;
        for step in 0..arcs {
            let e = (cursor + step) % arcs;
            let violation = match self.state[e] {
                State::Tree => 0.0,
                State::Lower => self.reduced(e),
                State::Upper => -self.reduced(e),
            };
            if violation < most {
                most = violation;
                best = Some(e);
            }
            if (step + 1) % block == 0 && best.is_some() {
                break;
            }
        }
        best
    }

    /// Pivots on entering arc `e`: pushes flow round its cycle and swaps it for the leaving arc.
    fn pivot(&mut self, e: usize) {
        let (first, second) =
            if self.state[e] == State::Lower { (self.tail[e], self.head[e]) } else { (self.head[e], self.tail[e]) };
        let (mut u, mut v) = (first, second);
        while u != v {
            if self.depth[u] >= self.depth[v] {
                u = self.parent[u];
            } else {
                v = self.parent[v];
            }
        }
        let join = u;

        // Flow runs first -> second along `e`, up from `second` to the join, down from the join to `first`. The
        // leaving arc is the last blocking one in that order from the join (strict on the way down, non-strict on
        // the way up), which keeps the tree strongly feasible.
        let mut delta = if self.state[e] == State::Lower { self.cap[e] - self.flow[e] } else { self.flow[e] };
        let mut leaving: Option<(usize, bool)> = None;
        let mut w = first;
        while w != join {
            let a = self.pred[w];
            let room = if self.up[w] { self.flow[a] } else { self.cap[a] - self.flow[a] };
            if room < delta {
                delta = room;
                leaving = Some((w, true));
            }
            w = self.parent[w];
        }
        w = second;
        while w != join {
            let a = self.pred[w];
            let room = if self.up[w] { self.cap[a] - self.flow[a] } else { self.flow[a] };
            if room <= delta {
                delta = room;
                leaving = Some((w, false));
            }
            w = self.parent[w];
        }

        if delta > 0 {
            if self.state[e] == State::Lower {
                self.flow[e] += delta;
            } else {
                self.flow[e] -= delta;
            }
            for (start, downward) in [(first, true), (second, false)] {
                let mut w = start;
                while w != join {
                    let a = self.pred[w];
                    if self.up[w] == downward {
                        self.flow[a] -= delta;
                    } else {
                        self.flow[a] += delta;
                    }
                    w = self.parent[w];
                }
            }
        }

        let Some((out, on_first_side)) = leaving else {
            // `e` itself blocks: it moves to its other bound and the tree stays.
            self.state[e] = if self.state[e] == State::Lower { State::Upper } else { State::Lower };
            return;
        };
        let gone = self.pred[out];
        self.state[gone] = if self.flow[gone] == 0 { State::Lower } else { State::Upper };
        for end in [self.tail[gone], self.head[gone]] {
            self.tree[end].retain(|&a| a != gone);
        }
        self.state[e] = State::Tree;
        self.tree[self.tail[e]].push(e);
        self.tree[self.head[e]].push(e);

        // The subtree cut off below `out` hangs again from `e`: recompute its parents, depths and potentials.
        let (low, high) = if on_first_side { (first, second) } else { (second, first) };
        self.hang(low, high, e);
        let mut stack = vec![low];
        while let Some(node) = stack.pop() {
            for i in 0..self.tree[node].len() {
                let a = self.tree[node][i];
                if a != self.pred[node] {
                    let child = if self.tail[a] == node { self.head[a] } else { self.tail[a] };
                    self.hang(child, node, a);
                    stack.push(child);
                }
            }
        }
    }

    /// Makes `parent` the parent of `node` through arc `a`, and sets `node`'s depth and potential.
    fn hang(&mut self, node: usize, parent: usize, a: usize) {
        self.parent[node] = parent;
        self.pred[node] = a;
        self.up[node] = self.tail[a] == node;
        self.depth[node] = self.depth[parent] + 1;
        // Tree arcs have zero reduced cost: cost + potential(tail) - potential(head) = 0.
        self.potential[node] =
            if self.up[node] { self.potential[parent] - self.cost[a] } else { self.potential[parent] + self.cost[a] };
    }
}

/// Ships every source's `supply` to sinks of `capacity` over `arcs`, or to the unbounded overflow sink at
/// `overflow_cost[s]` per unit, at minimum total cost.
///
/// `arcs[s]` lists `(sink, cost per unit)` for source `s`; sinks index `capacity`. Costs must be finite and
/// non-negative (they are: prices, runtimes and penalties). Returns the flow on each arc, aligned with `arcs`, and
/// the amount each source sends to the overflow sink.
pub(crate) fn transport(
    supply: &[u32],
    capacity: &[u32],
    arcs: &[Vec<(usize, f64)>],
    overflow_cost: &[f64],
) -> (Vec<Vec<u32>>, Vec<u32>) {
    let n = supply.len();
    let m = capacity.len();
    let (overflow, sink) = (n + m, n + m + 1);
    let nodes = n + m + 2;
    let total: u64 = supply.iter().map(|&s| u64::from(s)).sum();
    // No arc ever carries more than the total supply: this is infinite.
    let unbounded = total + 1;

    let real: usize = arcs.iter().map(Vec::len).sum();
    let size = real + n + m + 1;
    let mut net = Simplex {
        tail: Vec::with_capacity(size),
        head: Vec::with_capacity(size),
        cost: Vec::with_capacity(size),
        cap: Vec::with_capacity(size),
        flow: Vec::with_capacity(size),
        state: Vec::with_capacity(size),
        parent: vec![sink; nodes],
        pred: vec![0; nodes],
        up: vec![true; nodes],
        depth: vec![1; nodes],
        potential: vec![0.0; nodes],
        tree: vec![Vec::new(); nodes],
    };
    for (s, list) in arcs.iter().enumerate().take(n) {
        for &(site, cost) in list.iter().filter(|&&(site, _)| site < m) {
            net.add(s, n + site, cost, unbounded, 0, State::Lower);
        }
    }
    let overflow_arcs = net.cost.len();
    // The initial tree: sources hang from the overflow sink, sites and the overflow sink from the super-sink.
    for (s, &units) in supply.iter().enumerate() {
        let cost = overflow_cost.get(s).copied().unwrap_or(0.0);
        let a = net.add(s, overflow, cost, unbounded, u64::from(units), State::Tree);
        net.parent[s] = overflow;
        net.pred[s] = a;
        net.depth[s] = 2;
        net.potential[s] = -cost;
    }
    for (site, &cpus) in capacity.iter().enumerate() {
        let a = net.add(n + site, sink, 0.0, u64::from(cpus), 0, State::Tree);
        net.pred[n + site] = a;
    }
    let a = net.add(overflow, sink, 0.0, unbounded, total, State::Tree);
    net.pred[overflow] = a;
    net.depth[sink] = 0;
    for e in overflow_arcs..net.cost.len() {
        net.tree[net.tail[e]].push(e);
        net.tree[net.head[e]].push(e);
    }

    // Potentials are sums of at most `nodes` costs: rounding stays below this.
    let largest = net.cost.iter().fold(0.0f64, |a, &c| a.max(c.abs()));
    let tolerance = largest * nodes as f64 * f64::EPSILON;
    let arcs_total = net.cost.len();
    let block = ((arcs_total as f64).sqrt() as usize).max(10);
    let mut cursor = 0;
    // A safety net far above any observed pivot count: the flow stays feasible whenever the loop stops.
    for _ in 0..arcs_total.saturating_mul(64) {
        let Some(e) = net.entering(cursor, block, tolerance) else { break };
        net.pivot(e);
        cursor = (e + 1) % arcs_total;
    }

    let mut e = 0;
    let flows = arcs
        .iter()
        .take(n)
        .map(|list| {
            list.iter()
                .map(|&(site, _)| {
                    if site >= m {
                        return 0;
                    }
                    e += 1;
                    // Flows never exceed a source's supply, a u32.
                    net.flow[e - 1] as u32
                })
                .collect()
        })
        .collect();
    let spilled = (0..n).map(|s| net.flow[overflow_arcs + s] as u32).collect();
    (flows, spilled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(arcs: &[Vec<(usize, f64)>], flows: &[Vec<u32>]) -> f64 {
        flows.iter().zip(arcs).flat_map(|(fs, a)| fs.iter().zip(a).map(|(&x, &(_, c))| f64::from(x) * c)).sum()
    }

    #[test]
    fn reroutes_to_the_optimum() {
        // Sink 0 matters more to source 1 (saves 9) than to source 0 (saves 1).
        let arcs = vec![vec![(0, 1.0), (1, 2.0)], vec![(0, 1.0), (1, 10.0)]];
        let (flows, spilled) = transport(&[1, 1], &[1, 1], &arcs, &[100.0, 100.0]);
        assert_eq!(flows, vec![vec![0, 1], vec![1, 0]]);
        assert_eq!(spilled, vec![0, 0]);
    }

    #[test]
    fn overflows_what_no_sink_takes() {
        let (flows, spilled) = transport(&[3, 2], &[2], &[vec![(0, 1.0)], vec![]], &[50.0, 0.0]);
        assert_eq!(flows, vec![vec![2], vec![]]);
        assert_eq!(spilled, vec![1, 2]);
    }

    #[test]
    fn overflows_the_cheapest_to_overflow() {
        // One sink of 3 units for 2 + 2: source 1 overflows at 5 a unit, source 0 would cost 20.
        let arcs = vec![vec![(0, 1.0)], vec![(0, 1.0)]];
        let (flows, spilled) = transport(&[2, 2], &[3], &arcs, &[20.0, 5.0]);
        assert_eq!(flows, vec![vec![2], vec![1]]);
        assert_eq!(spilled, vec![0, 1]);
    }

    #[test]
    fn splits_supply_by_marginal_cost() {
        let arcs = vec![vec![(0, 1.0), (1, 4.0)], vec![(0, 2.0), (1, 3.0)]];
        let (flows, _) = transport(&[3, 3], &[3, 3], &arcs, &[99.0, 99.0]);
        // Source 0 saves 3 a unit on sink 0, source 1 only 1: 3*1 + 3*3 = 12.
        assert_eq!(flows, vec![vec![3, 0], vec![0, 3]]);
        assert_eq!(cost(&arcs, &flows), 12.0);
    }

    #[test]
    fn degenerate_ties_terminate_at_the_optimum() {
        // Integer costs with many ties: the classic setting for cycling without strongly feasible trees.
        let sources = 12;
        let sinks = 7;
        let arcs: Vec<Vec<(usize, f64)>> =
            (0..sources).map(|s| (0..sinks).map(|t| (t, ((s * 3 + t * 5) % 4) as f64)).collect()).collect();
        let supply: Vec<u32> = (0..sources).map(|s| 1 + (s % 3) as u32).collect();
        let capacity = vec![3; sinks];
        let (flows, spilled) = transport(&supply, &capacity, &arcs, &vec![10.0; sources]);
        let shipped: u32 = flows.iter().flatten().sum::<u32>() + spilled.iter().sum::<u32>();
        assert_eq!(shipped, supply.iter().sum::<u32>());
        // Capacity 21 of demand 24: 3 units overflow at 10; the 21 shipped all find a cost-0 arc.
        assert_eq!(spilled.iter().sum::<u32>(), 3);
        assert_eq!(cost(&arcs, &flows), 0.0);
    }
}
