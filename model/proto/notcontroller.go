package proto

import "kafkasim/sim"

// ControllerRequest is a request only the active controller serves. A
// controller that is not active answers NotController(hint): NOT_CONTROLLER
// with the active controller it knows of (sim.NoNode: none), as Kafka's
// ControllerApis does.
type ControllerRequest interface {
	sim.Message
	NotController(hint sim.NodeID) sim.Message
}

func (m *BrokerRegistrationRequest) NotController(hint sim.NodeID) sim.Message {
	return &BrokerRegistrationResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *BrokerHeartbeatRequest) NotController(hint sim.NodeID) sim.Message {
	return &BrokerHeartbeatResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *AlterPartitionRequest) NotController(hint sim.NodeID) sim.Message {
	return &AlterPartitionResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *CreateTopicsRequest) NotController(hint sim.NodeID) sim.Message {
	return &CreateTopicsResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *CreatePartitionsRequest) NotController(hint sim.NodeID) sim.Message {
	return &CreatePartitionsResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *ElectLeadersRequest) NotController(hint sim.NodeID) sim.Message {
	return &ElectLeadersResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *IncrementalAlterConfigsRequest) NotController(hint sim.NodeID) sim.Message {
	return &IncrementalAlterConfigsResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

func (m *AlterPartitionReassignmentsRequest) NotController(hint sim.NodeID) sim.Message {
	return &AlterPartitionReassignmentsResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}
