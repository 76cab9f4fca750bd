//! The market exchange (Mandi, Garg 2010 ch 8): its trading mechanisms, pure functions of the orders ([`mechanism`]).

pub mod mechanism;
