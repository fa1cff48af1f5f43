package proto

import "kafkasim/sim"

// IncrementalAlterConfigs (KIP-339, kafka-configs.sh --alter): the admin
// client sets configs of a topic or a broker. In Kafka 4 a broker forwards
// the request to the active controller; the model's admin client sends it
// to the controller directly, as it does its other admin requests.

// Config resource types, as Kafka's ConfigResource.Type ids.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
)

// Errors of IncrementalAlterConfigs.
const (
	InvalidConfig         ErrorCode = 40
	BrokerIDNotRegistered ErrorCode = 102
)

func init() {
	errorNames[InvalidConfig] = "INVALID_CONFIG"
	errorNames[BrokerIDNotRegistered] = "BROKER_ID_NOT_REGISTERED"
}

// AlterableConfig is one config set (OpType SET; the model has no DELETE,
// APPEND or SUBTRACT).
type AlterableConfig struct {
	Name  string
	Value string
}

// IncrementalAlterConfigsRequest sets configs of one resource: a topic, a
// broker (ResourceName its id) or every broker (ResourceName "", the
// cluster-wide default, kafka-configs.sh --entity-default).
type IncrementalAlterConfigsRequest struct {
	CorrelationID uint64
	ResourceType  int8
	ResourceName  string
	Configs       []AlterableConfig
}

// IncrementalAlterConfigsResponse answers it: the resource's error, all or
// nothing (ConfigurationControlManager validates a resource's configs
// together).
type IncrementalAlterConfigsResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	Message        string
	ControllerHint sim.NodeID
}

// MessageName implements sim.Message.
func (*IncrementalAlterConfigsRequest) MessageName() string { return "IncrementalAlterConfigs" }

// MessageName implements sim.Message.
func (*IncrementalAlterConfigsResponse) MessageName() string {
	return "IncrementalAlterConfigsResponse"
}
