package admin

import (
	"fmt"
	"strings"

	"kafkasim/model/proto"
)

// AlterConfigs queues an IncrementalAlterConfigs request (kafka-configs.sh
// --alter) setting configs of a topic (proto.ResourceTopic, name), a broker
// (proto.ResourceBroker, its id) or every broker (ResourceBroker, ""). Its
// answer is logged and noted in the trace; an error is not retried, as
// kafka-configs.sh reports it and stops.
func (n *Node) AlterConfigs(resourceType int8, name string, configs []proto.AlterableConfig) {
	n.enqueue(&op{alter: &proto.IncrementalAlterConfigsRequest{ResourceType: resourceType, ResourceName: name,
		Configs: append([]proto.AlterableConfig(nil), configs...)}})
}

// noteAlterConfigs logs an IncrementalAlterConfigs answer, one line:
// "alter-config topic orders min.insync.replicas=1: NONE", or with the
// error and its message.
func (n *Node) noteAlterConfigs(req *proto.IncrementalAlterConfigsRequest, m *proto.IncrementalAlterConfigsResponse) {
	var b strings.Builder
	b.WriteString("alter-config ")
	switch {
	case req.ResourceType == proto.ResourceTopic:
		b.WriteString("topic " + req.ResourceName)
	case req.ResourceName == "":
		b.WriteString("broker all")
	default:
		b.WriteString("broker " + req.ResourceName)
	}
	for i, c := range req.Configs {
		sep := ","
		if i == 0 {
			sep = " "
		}
		b.WriteString(sep + c.Name + "=" + c.Value)
	}
	b.WriteString(": " + m.Error.String())
	if m.Message != "" {
		b.WriteString(" (" + m.Message + ")")
	}
	n.env.Note("admin", b.String())
	n.Log = append(n.Log, fmt.Sprintf("%v %s", n.env.Now(), b.String()))
}
