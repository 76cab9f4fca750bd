//! The market exchange (Mandi, Garg 2010 ch 8): the actor ([`agent`]), the scenario kind ([`kind`]), and its trading
//! mechanisms, pure functions of the orders ([`mechanism`]).

pub mod agent;
pub mod kind;
pub mod mechanism;
