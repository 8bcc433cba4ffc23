//! What the parts left for the server (`Assembly::provide`): one value per type, kept as long as
//! the server is (a connection pool's handle stays open by being here) and read by the layer that
//! knows the type — the ledger's budgets by the resources, a part's routes by HTTP — so the
//! server names no part.

use std::any::{Any, TypeId};

#[derive(Default)]
pub(crate) struct Kept(Vec<(TypeId, Box<dyn Any + Send + Sync>)>);

impl Kept {
    /// Keep `value`, replacing the value of its type kept before.
    pub(crate) fn put<T: Any + Send + Sync>(&mut self, value: T) {
        self.0.retain(|(id, _)| *id != TypeId::of::<T>());
        self.0.push((TypeId::of::<T>(), Box::new(value)));
    }

    pub(crate) fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        let (_, value) = self.0.iter().find(|(id, _)| *id == TypeId::of::<T>())?;
        value.downcast_ref()
    }

    /// The value of type `T`, kept now if there was none.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn entry<T: Any + Send + Sync + Default>(&mut self) -> &mut T {
        if self.get::<T>().is_none() {
            self.put(T::default());
        }
        let (_, value) = self.0.iter_mut().find(|(id, _)| *id == TypeId::of::<T>()).expect("kept just now");
        value.downcast_mut().expect("kept under its own type")
    }

    pub(crate) fn take<T: Any + Send + Sync>(&mut self) -> Option<T> {
        let at = self.0.iter().position(|(id, _)| *id == TypeId::of::<T>())?;
        self.0.swap_remove(at).1.downcast().ok().map(|value| *value)
    }
}
