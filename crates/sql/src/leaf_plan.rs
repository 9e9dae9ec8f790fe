//! What every leaf execution plan of ours shares: its properties (bounded, no known
//! ordering or partitioning) and the four `ExecutionPlan` methods that only read
//! them ([`leaf_plan_methods!`](crate::leaf_plan_methods)).

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::{Partitioning, PlanProperties};

/// The properties of a bounded leaf plan of `partitions` partitions producing
/// `schema`, emitting its rows as they come (`incremental`) or all at its end.
pub fn leaf_properties(schema: SchemaRef, partitions: usize, incremental: bool) -> PlanProperties {
    PlanProperties::new(
        EquivalenceProperties::new(schema),
        Partitioning::UnknownPartitioning(partitions),
        if incremental { EmissionType::Incremental } else { EmissionType::Final },
        Boundedness::Bounded,
    )
}

/// Inside `impl ExecutionPlan for T`, where `T` has a field `props:
/// Arc<PlanProperties>` and no children: `name` (the given literal), `properties`,
/// `children` and `with_new_children`.
#[macro_export]
macro_rules! leaf_plan_methods {
    ($name:literal) => {
        fn name(&self) -> &str {
            $name
        }

        fn properties(&self) -> &::std::sync::Arc<::datafusion::physical_plan::PlanProperties> {
            &self.props
        }

        fn children(&self) -> Vec<&::std::sync::Arc<dyn ::datafusion::physical_plan::ExecutionPlan>> {
            Vec::new()
        }

        fn with_new_children(
            self: ::std::sync::Arc<Self>,
            _children: Vec<::std::sync::Arc<dyn ::datafusion::physical_plan::ExecutionPlan>>,
        ) -> ::datafusion::error::Result<::std::sync::Arc<dyn ::datafusion::physical_plan::ExecutionPlan>> {
            Ok(self)
        }
    };
}
