//! Per-agent random streams derived from the master seed.

use rand_pcg::Pcg64Mcg;

/// The generator behind every random stream: PCG-64 MCG (`pcg64_fast`), whose output is fixed by its
/// specification, unlike `StdRng`, whose algorithm may change between `rand` releases.
pub type SimRng = Pcg64Mcg;

/// Seeds the generator of `stream` for the agent called `agent_name` under `master_seed`.
///
/// Streams are keyed by the agent's *name*, not its index, so adding an agent to a scenario leaves the random
/// numbers of every other agent unchanged (common random numbers across sweep points).
pub fn stream(master_seed: u64, agent_name: &str, stream: u64) -> SimRng {
    let mut h = splitmix64(master_seed ^ 0x6772_6964_6d61_726b); // "gridmark"
    for chunk in agent_name.as_bytes().chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = splitmix64(h ^ u64::from_le_bytes(word));
    }
    h = splitmix64(h ^ agent_name.len() as u64);
    let lo = splitmix64(h ^ stream);
    let hi = splitmix64(lo ^ 0x9e37_79b9_7f4a_7c15);
    SimRng::new(((hi as u128) << 64) | lo as u128)
}

/// SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let draw = |seed, name, s| stream(seed, name, s).next_u64();
        assert_eq!(draw(7, "provider-1", 0), draw(7, "provider-1", 0));
        assert_ne!(draw(7, "provider-1", 0), draw(7, "provider-1", 1));
        assert_ne!(draw(7, "provider-1", 0), draw(7, "provider-2", 0));
        assert_ne!(draw(7, "provider-1", 0), draw(8, "provider-1", 0));
        // Names that differ only past the first 8 bytes still differ.
        assert_ne!(draw(7, "provider-10000", 0), draw(7, "provider-10001", 0));
    }

    const PINNED: u64 = 14_213_358_133_106_864_107;

    #[test]
    fn the_generator_is_pinned() {
        // Pins the portable algorithm: if this changes, every published figure would silently move.
        assert_eq!(stream(1, "a", 0).next_u64(), PINNED);
    }
}
