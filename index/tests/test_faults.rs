//! Faults: broken, foreign, outdated or unsafe projections never break a read; the next
//! writer rebuilds, and authoritative files are never touched.
